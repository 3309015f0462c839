import type { ModelRecord, ModelSourceAsRead } from '#shared/api/openai.js';
import { ApiError, request, send } from './client';

/** A model as any companion lists it: one from before this release says `remote` for a provider's model. */
type ModelRecordAsRead = Omit<ModelRecord, 'source'> & { source?: ModelSourceAsRead };

/** The companion's models, each with `source` `local` or `provider` (an older companion's `remote` read as `provider`). */
export async function listModels(): Promise<ModelRecord[]> {
  return (await request<{ object: 'list'; data: ModelRecordAsRead[] }>('/v1/models')).data.map(readModel);
}

function readModel({ source, ...model }: ModelRecordAsRead): ModelRecord {
  return source === undefined ? model : { ...model, source: source === 'remote' ? 'provider' : source };
}

/** Where the companion serves a local model's GGUF file. */
export function modelFilePath(id: string): string {
  return `/v1/models/${encodeURIComponent(id)}/file`;
}

/** The size of a model's file, asked with HEAD before any byte is downloaded. */
export async function modelFileSize(id: string, signal?: AbortSignal): Promise<number> {
  const response = await send(modelFilePath(id), { method: 'HEAD', headers: { accept: '*/*' }, signal });
  const size = Number(response.headers.get('content-length'));
  if (!Number.isFinite(size) || size <= 0) throw new ApiError(response.status, 'invalid_response', `The companion did not say how large ${id} is.`);
  return size;
}

export interface ModelFileDownload {
  size: number;
  /** The file's bytes; cancelling `signal` cancels it. */
  body: ReadableStream<Uint8Array>;
}

/** Opens the download of a model's GGUF file. */
export async function downloadModelFile(id: string, signal?: AbortSignal): Promise<ModelFileDownload> {
  const response = await send(modelFilePath(id), { headers: { accept: 'application/octet-stream' }, signal });
  const size = Number(response.headers.get('content-length'));
  if (!response.body || !Number.isFinite(size) || size <= 0) {
    throw new ApiError(response.status, 'invalid_response', `The companion sent no file for ${id}.`);
  }
  return { size, body: response.body };
}
