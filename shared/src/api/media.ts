/** Wire types of hosted media (/v1/media/*): paid video generation by quote and confirmation. */
import type { MediaJobFailureCode } from './failures.js';

export type MediaOperation = 'video.generate' | 'video.from_image';

/** The month's spending on hosted media against `images.hosted.monthly_budget_usd`. */
export interface MediaBudget {
  enabled: boolean;
  monthly_budget_usd: number;
  spent_usd: number;
  remaining_usd: number;
  /** `YYYY-MM` (UTC) the figures are for. */
  month: string;
}

export interface MediaModelOffer {
  id: string;
  operations: MediaOperation[];
  seconds: number[];
  sizes: string[];
  usd_per_second: number;
}

export interface MediaProviderRecord {
  name: string;
  /** The wire format spoken: OpenAI's video jobs (create, retrieve, download content). */
  api: 'openai_videos';
  models: MediaModelOffer[];
}

/** GET /v1/media/providers */
export interface MediaProviderList {
  object: 'list';
  data: MediaProviderRecord[];
  budget: MediaBudget;
}

/** POST /v1/media/quotes */
export interface MediaQuoteRequest {
  provider: string;
  /** Defaults to the provider's first model. */
  model?: string;
  operation: MediaOperation;
  prompt: string;
  seconds: number;
  /** `WIDTHxHEIGHT`, one the model offers. */
  size: string;
  /** video.from_image: the first frame, as a data URL (image/png, image/jpeg or image/webp). */
  input_image?: string;
}

/** What is ordered and its price: the same on a quote and on the job it buys. */
export interface MediaOrder {
  provider: string;
  model: string;
  operation: MediaOperation;
  prompt: string;
  seconds: number;
  size: string;
  cost_usd: number;
}

export interface MediaQuote extends MediaOrder {
  id: string;
  object: 'media.quote';
  currency: 'USD';
  created_at: number;
  /** Unix seconds; a job needs an unexpired, unused quote. */
  expires_at: number;
  constraints: { seconds: number[]; sizes: string[]; operations: MediaOperation[]; max_prompt_chars: number };
  budget: MediaBudget;
}

/** POST /v1/media/jobs: dispatches exactly what was quoted. */
export interface MediaJobRequest {
  quote_id: string;
  confirm: boolean;
}

/**
 * submitting: being sent; submitted work is `queued`/`in_progress` at the provider; `downloading`:
 * the provider finished and the artifact is being copied into the data folder; `completed`: the
 * copy is here. A job whose submission outcome is unknown is looked up, never sent twice.
 */
export type MediaJobStatus = 'submitting' | 'queued' | 'in_progress' | 'downloading' | 'completed' | 'failed';

export interface MediaJob extends MediaOrder {
  id: string;
  object: 'media.job';
  quote_id: string;
  status: MediaJobStatus;
  /** 0-100 as the provider reports it. */
  progress: number;
  /** The provider's id of the video job, once it answered. */
  remote_id: string | null;
  created_at: number;
  submitted_at: number | null;
  completed_at: number | null;
  /** When the provider's copy expires (Unix seconds), as it reports it. */
  remote_expires_at: number | null;
  /** Where the copied artifact is served once completed. */
  content_url: string | null;
  error: { code: MediaJobFailureCode; message: string } | null;
}

export interface MediaJobList {
  object: 'list';
  data: MediaJob[];
}
