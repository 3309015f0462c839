/**
 * OpenAI's video jobs API, the wire format hosted media speaks: POST /videos (multipart:
 * prompt, model, seconds, size, input_reference) creates a job, GET /videos/{id} retrieves its
 * status, GET /videos lists recent jobs, GET /videos/{id}/content downloads the MP4.
 */
import { HearthError } from '../errors.js';
import type { RemoteProviders } from '../providers/remote.js';

/** The fields of OpenAI's Video object that Hearth reads. */
export interface RemoteVideo {
  id: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  progress?: number;
  model?: string;
  prompt?: string | null;
  seconds?: string;
  size?: string;
  created_at?: number;
  completed_at?: number | null;
  expires_at?: number | null;
  error?: { code?: string; message?: string } | null;
}

export interface CreateVideo {
  model: string;
  prompt: string;
  seconds: number;
  size: string;
  /** First frame for image-to-video. */
  inputReference?: { bytes: Uint8Array; type: string };
}

function isVideo(value: unknown): value is RemoteVideo {
  const video = value as RemoteVideo | null;
  return typeof video?.id === 'string' && ['queued', 'in_progress', 'completed', 'failed'].includes(video.status);
}

export class OpenAiVideos {
  constructor(
    private readonly remote: RemoteProviders,
    private readonly provider: string,
  ) {}

  async create(request: CreateVideo, signal?: AbortSignal): Promise<RemoteVideo> {
    const form = new FormData();
    form.set('model', request.model);
    form.set('prompt', request.prompt);
    form.set('seconds', String(request.seconds));
    form.set('size', request.size);
    if (request.inputReference) {
      const extension = request.inputReference.type.split('/')[1] ?? 'png';
      form.set(
        'input_reference',
        new Blob([request.inputReference.bytes as Uint8Array<ArrayBuffer>], { type: request.inputReference.type }),
        `reference.${extension}`,
      );
    }
    return this.video(await this.remote.request(this.provider, '/videos', { method: 'POST', body: form }, signal), 'create');
  }

  async retrieve(id: string, signal?: AbortSignal): Promise<RemoteVideo> {
    return this.video(await this.remote.request(this.provider, `/videos/${encodeURIComponent(id)}`, { method: 'GET' }, signal), 'retrieve');
  }

  /** Recent jobs, newest first (to find one whose submission outcome was lost). */
  async list(limit: number, signal?: AbortSignal): Promise<RemoteVideo[]> {
    const response = await this.remote.request(this.provider, `/videos?limit=${limit}&order=desc`, { method: 'GET' }, signal);
    if (!response.ok) throw await this.remote.failure(this.provider, response);
    const body = (await response.json().catch(() => undefined)) as { data?: unknown[] } | undefined;
    return (body?.data ?? []).filter(isVideo);
  }

  /** The rendered MP4; its body is streamed by the caller. */
  async content(id: string, signal?: AbortSignal): Promise<Response> {
    const response = await this.remote.request(this.provider, `/videos/${encodeURIComponent(id)}/content?variant=video`, { method: 'GET' }, signal);
    if (!response.ok || !response.body) throw await this.remote.failure(this.provider, response);
    return response;
  }

  private async video(response: Response, what: string): Promise<RemoteVideo> {
    if (!response.ok) throw await this.remote.failure(this.provider, response);
    const body: unknown = await response.json().catch(() => undefined);
    if (!isVideo(body)) throw new HearthError('provider_error', `Provider "${this.provider}" answered the video ${what} request without a video object.`);
    return body;
  }
}
