/**
 * OpenAI's video jobs API, the wire format hosted media speaks: POST /videos (multipart:
 * prompt, model, seconds, size, input_reference) creates a job, GET /videos/{id} retrieves its
 * status, GET /videos lists recent jobs, GET /videos/{id}/content downloads the MP4.
 */
import { HearthError } from '../errors.js';
import type { ProviderClient } from '../providers/client.js';
import { readAnswerJson } from '../providers/read-body.js';

/** The fields of OpenAI's Video object that Hearth reads. */
export interface ProviderVideo {
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

/**
 * What came of a create request. Hosted media is paid: a job counts as spent unless Hearth knows
 * the provider never made it, so only a clear refusal says `refused`; an answer that proves
 * nothing (a 5xx, a body that is not a video, a connection lost after sending) says `unknown`,
 * and the job is looked up among the provider's jobs.
 */
export type CreateOutcome = { created: ProviderVideo } | { refused: HearthError } | { unknown: Error };

/** Statuses OpenAI's API documents as a request it did not carry out (bad request, key, region, not found, size, rate limit or quota). */
const REFUSAL_STATUSES = new Set([400, 401, 402, 403, 404, 413, 415, 422, 429]);
/** Network failures before any byte of the request reached the provider (no connection, no name, a certificate refused). */
const NEVER_REACHED =
  /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EAI_NONAME|EHOSTUNREACH|ENETUNREACH|EADDRNOTAVAIL|UND_ERR_CONNECT_TIMEOUT|ERR_TLS_CERT_ALTNAME_INVALID|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)/;

function isVideo(value: unknown): value is ProviderVideo {
  const video = value as ProviderVideo | null;
  return typeof video?.id === 'string' && ['queued', 'in_progress', 'completed', 'failed'].includes(video.status);
}

export class OpenAiVideos {
  constructor(
    private readonly providers: ProviderClient,
    private readonly provider: string,
  ) {}

  async create(request: CreateVideo, signal?: AbortSignal): Promise<CreateOutcome> {
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
    let response: Response;
    try {
      response = await this.providers.request(this.provider, '/videos', { method: 'POST', body: form }, signal);
    } catch (error) {
      if (error instanceof HearthError && error.code === 'provider_error') return { refused: error }; // refused before sending (its settings)
      if (error instanceof HearthError && error.code === 'provider_unreachable' && NEVER_REACHED.test(String(error.cause))) return { refused: error };
      return { unknown: error instanceof Error ? error : new Error(String(error)) };
    }
    if (!response.ok) {
      const failure = await this.providers.failure(this.provider, response);
      return REFUSAL_STATUSES.has(response.status) ? { refused: failure } : { unknown: failure };
    }
    let body: unknown;
    try {
      body = await readAnswerJson(response, this.provider);
    } catch (error) {
      return { unknown: error instanceof Error ? error : new Error(String(error)) };
    }
    if (isVideo(body)) return { created: body };
    return { unknown: new HearthError('provider_error', `Provider "${this.provider}" answered the video create request without a video object.`) };
  }

  async retrieve(id: string, signal?: AbortSignal): Promise<ProviderVideo> {
    return this.video(await this.providers.request(this.provider, `/videos/${encodeURIComponent(id)}`, { method: 'GET' }, signal), 'retrieve');
  }

  /** Recent jobs, newest first (to find one whose submission outcome was lost). */
  async list(limit: number, signal?: AbortSignal): Promise<ProviderVideo[]> {
    const response = await this.providers.request(this.provider, `/videos?limit=${limit}&order=desc`, { method: 'GET' }, signal);
    if (!response.ok) throw await this.providers.failure(this.provider, response);
    const body = (await readAnswerJson(response, this.provider)) as { data?: unknown[] } | undefined;
    return (body?.data ?? []).filter(isVideo);
  }

  /** The rendered MP4; its body is streamed by the caller. */
  async content(id: string, signal?: AbortSignal): Promise<Response> {
    const response = await this.providers.request(this.provider, `/videos/${encodeURIComponent(id)}/content?variant=video`, { method: 'GET' }, signal);
    if (!response.ok || !response.body) throw await this.providers.failure(this.provider, response);
    return response;
  }

  private async video(response: Response, what: string): Promise<ProviderVideo> {
    if (!response.ok) throw await this.providers.failure(this.provider, response);
    const body = await readAnswerJson(response, this.provider);
    if (!isVideo(body)) throw new HearthError('provider_error', `Provider "${this.provider}" answered the video ${what} request without a video object.`);
    return body;
  }
}
