/** Image and hosted-media routes of the companion (/v1/images/*, /v1/media/*). */
import type { ImageGenerationRequest, ImageJob, ImageJobList, ImageModelList, ImageModelRecord, ImageStreamEvent } from '#shared/api/images.js';
import type { MediaJob, MediaJobList, MediaProviderList, MediaQuote, MediaQuoteRequest } from '#shared/api/media.js';
import { ApiError, events, request, send } from './client';

export async function listImageModels(): Promise<ImageModelRecord[]> {
  return (await request<ImageModelList>('/v1/images/models')).data;
}

/** Reads a job's server-sent events until it ends; `onEvent` sees each one. */
async function follow(response: Response, onEvent: (event: ImageStreamEvent) => void, signal?: AbortSignal): Promise<void> {
  if (!response.body) throw new ApiError(response.status, 'invalid_response', 'The companion sent no event stream.');
  for await (const data of events(response.body, signal)) {
    let event: ImageStreamEvent;
    try {
      event = JSON.parse(data) as ImageStreamEvent;
    } catch {
      throw new ApiError(response.status, 'invalid_response', 'The companion sent an event that is not JSON.');
    }
    onEvent(event);
  }
}

export async function generateImages(
  body: Omit<ImageGenerationRequest, 'stream'>,
  onEvent: (event: ImageStreamEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  const response = await send('/v1/images/generations', {
    method: 'POST',
    body: JSON.stringify({ ...body, stream: true }),
    headers: { accept: 'text/event-stream' },
    signal,
  });
  await follow(response, onEvent, signal);
}

/** A multipart body as a Blob with its boundary in the type, so the request helper keeps it as it is. */
async function multipart(fields: Record<string, string | number | undefined>, files: Record<string, Blob | undefined>): Promise<{ body: Blob; type: string }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined && value !== '') form.set(name, String(value));
  for (const [name, file] of Object.entries(files)) if (file) form.set(name, file, file instanceof File ? file.name : `${name}.png`);
  const encoded = new Response(form);
  return { body: await encoded.blob(), type: encoded.headers.get('content-type') ?? 'multipart/form-data' };
}

async function upload(
  path: string,
  fields: Record<string, string | number | undefined>,
  files: Record<string, Blob | undefined>,
  onEvent: (event: ImageStreamEvent) => void,
  signal?: AbortSignal,
) {
  const { body, type } = await multipart({ ...fields, stream: 'true' }, files);
  const response = await send(path, { method: 'POST', body, headers: { 'content-type': type, accept: 'text/event-stream' }, signal });
  await follow(response, onEvent, signal);
}

export interface EditFields {
  model: string;
  prompt: string;
  negative_prompt?: string;
  size?: string;
  steps?: number;
  guidance?: number;
  seed?: number;
  strength?: number;
}

export function editImage(
  fields: EditFields,
  image: Blob,
  mask: Blob | undefined,
  onEvent: (event: ImageStreamEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  return upload('/v1/images/edits', { ...fields }, { image, mask }, onEvent, signal);
}

export function upscaleImage(model: string, scale: number, image: Blob, onEvent: (event: ImageStreamEvent) => void, signal?: AbortSignal): Promise<void> {
  return upload('/v1/images/upscale', { model, scale }, { image }, onEvent, signal);
}

export function cancelImageJob(jobId: string): Promise<ImageJob> {
  return request<ImageJob>('/v1/images/cancel', { method: 'POST', body: JSON.stringify({ job_id: jobId }) });
}

export async function listImageJobs(limit = 48): Promise<ImageJob[]> {
  return (await request<ImageJobList>(`/v1/images/jobs?limit=${limit}`)).data;
}

export async function deleteImageJob(id: string): Promise<void> {
  await request(`/v1/images/jobs/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/** A stored file of the companion as a Blob (sent with the access key, unlike an <img src>). */
export async function fetchFile(path: string, signal?: AbortSignal): Promise<Blob> {
  return (await send(path, { headers: { accept: '*/*' }, signal })).blob();
}

export function mediaProviders(): Promise<MediaProviderList> {
  return request<MediaProviderList>('/v1/media/providers');
}

export function requestQuote(body: MediaQuoteRequest): Promise<MediaQuote> {
  return request<MediaQuote>('/v1/media/quotes', { method: 'POST', body: JSON.stringify(body) });
}

export function confirmQuote(quoteId: string): Promise<MediaJob> {
  return request<MediaJob>('/v1/media/jobs', { method: 'POST', body: JSON.stringify({ quote_id: quoteId, confirm: true }) });
}

export async function listMediaJobs(limit = 20): Promise<MediaJob[]> {
  return (await request<MediaJobList>(`/v1/media/jobs?limit=${limit}`)).data;
}
