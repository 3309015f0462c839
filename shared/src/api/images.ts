/** Wire types of the image routes (/v1/images/*): OpenAI's Images shapes plus Hearth's fields. */
import type { ErrorBody } from './errors.js';

/** What an image model can do; an operation needs its capability. */
export interface ImageCapabilities {
  generate: boolean;
  edit: boolean;
  upscale: boolean;
  /** Edits may take a mask (white = repaint). */
  mask: boolean;
  /** Edits may take more than one reference image. */
  multiple_references: boolean;
  negative_prompt: boolean;
  /** Edits take `strength` (how far the result may move from the source). */
  strength: boolean;
}

export interface ImageDefaults {
  /** `WIDTHxHEIGHT` used when a request gives none. */
  size: string | null;
  steps: number | null;
  guidance: number | null;
}

export interface ImageLimits {
  /** Width and height must be multiples of this. */
  size_multiple: number | null;
  /** Largest width × height of a result (for upscalers: of the output). */
  max_pixels: number;
  /** Inclusive range of `steps`. */
  steps: [number, number] | null;
  /** Upscale factors offered. */
  scales: number[];
}

export type ImageEngine = 'onnx-sd' | 'esrgan' | 'lanczos' | 'provider';

/** One entry of GET /v1/images/models. */
export interface ImageModelRecord {
  id: string;
  object: 'model';
  kind: 'image';
  /** models-dir: a folder you placed; package: weights shipped in an installed npm package; builtin; provider: `<provider>/<model>`. */
  source: 'models-dir' | 'package' | 'builtin' | 'provider';
  engine: ImageEngine;
  loaded: boolean;
  capabilities: ImageCapabilities;
  defaults: ImageDefaults;
  limits: ImageLimits;
  /** Why the model cannot be used (an incomplete folder names the missing part). */
  error?: string;
}

export interface ImageModelList {
  object: 'list';
  data: ImageModelRecord[];
}

export type ImageResponseFormat = 'b64_json' | 'url';

/** POST /v1/images/generations */
export interface ImageGenerationRequest {
  model: string;
  prompt: string;
  negative_prompt?: string;
  /** Images to make, 1-4; each uses seed + index. */
  n?: number;
  /** `WIDTHxHEIGHT`; the model's default when absent. */
  size?: string;
  steps?: number;
  guidance?: number;
  /** 0 to 2^32-1; a random one is chosen (and returned) when absent. */
  seed?: number;
  response_format?: ImageResponseFormat;
  /** Server-sent progress events instead of one JSON answer. */
  stream?: boolean;
  /** OpenAI's end-user tag: accepted, not used. */
  user?: string;
}

/**
 * POST /v1/images/edits is multipart/form-data like OpenAI's: `image` (one, or several where the
 * model takes several references), `mask`, and as text fields those of a generation plus `strength`.
 */
export interface ImageEditFields extends ImageGenerationRequest {
  /** 0-1: how far the result may move from the source image (default 0.75). */
  strength?: number;
}

/** POST /v1/images/upscale: multipart `image` plus these fields. */
export interface ImageUpscaleFields {
  model: string;
  /** 2 when absent. */
  scale?: number;
  response_format?: ImageResponseFormat;
  stream?: boolean;
}

export interface ImageData {
  b64_json?: string;
  url?: string;
  /** The seed that made this image (null for upscales and provider images). */
  seed: number | null;
  revised_prompt?: string;
  width: number;
  height: number;
}

/** The answer of the three image routes. */
export interface ImageResponse {
  created: number;
  data: ImageData[];
  job_id: string;
}

export type ImageOperation = 'generate' | 'edit' | 'upscale';
export type ImageJobStage = 'queued' | 'preparing' | 'generating';
export type ImageJobStatus = ImageJobStage | 'completed' | 'failed' | 'cancelled';

export interface ImageJobResult {
  /** Where the saved image is served (GET, same credentials as the API). */
  url: string;
  width: number;
  height: number;
  seed: number | null;
}

/** GET /v1/images/jobs/{id}; the gallery lists these. */
export interface ImageJob {
  id: string;
  object: 'image.job';
  operation: ImageOperation;
  model: string;
  status: ImageJobStatus;
  /** Steps done and planned while generating (tiles, for upscalers). */
  step: number;
  steps: number;
  prompt: string | null;
  negative_prompt: string | null;
  size: string | null;
  seed: number | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  /** A cancel was asked for; the job stops at the next step and then reports `cancelled`. */
  cancel_requested: boolean;
  /** Things the user should know, e.g. a language model unloaded to make room. */
  notes: string[];
  results: ImageJobResult[];
  error: ErrorBody['error'] | null;
}

export interface ImageJobList {
  object: 'list';
  data: ImageJob[];
}

/** POST /v1/images/cancel */
export interface ImageCancelRequest {
  job_id: string;
}

/** Events of `stream: true`, each sent as `event: <type>` with this object as data. */
export type ImageStreamEvent =
  | { type: 'image.stage'; job_id: string; stage: ImageJobStage; message?: string }
  | { type: 'image.progress'; job_id: string; step: number; steps: number }
  | { type: 'image.preview'; job_id: string; step: number; b64_json: string; width: number; height: number }
  | ({ type: 'image.completed' } & ImageResponse)
  | { type: 'image.failed'; job_id: string; error: ErrorBody['error'] }
  | { type: 'image.cancelled'; job_id: string; step: number; steps: number };
