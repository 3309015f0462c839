/** Wire types of the loopback-only /admin routes. */
import type { ModelDownload } from './model-library.js';

/** Which engine runs a loaded model: llama.cpp's own server as a child process, or node-llama-cpp inside the companion. */
export type EngineKind = 'server' | 'in-process';

/** The `models.engine` setting (or HEARTH_ENGINE): auto uses the server engine when its build is ready and works. */
export type EngineSetting = 'auto' | 'server' | 'in-process';

/** The llama-server build: compiled once per node-llama-cpp version into a cache outside the data folder. */
export type EngineBuildStatus =
  /** Not built; `reason` says why it cannot be built here (no compiler, an unsupported platform), if so. */
  | { state: 'absent'; reason?: string }
  /** `progress` 0..1; `step` in words (unpacking the source, configuring, compiling 12 of 70). */
  | { state: 'building'; progress: number; step: string; started_at: string }
  | { state: 'ready'; built_at: string; build_seconds: number }
  | { state: 'failed'; reason: string; failed_at: string };

export interface LoadedModelStatus {
  id: string;
  engine: EngineKind;
  /** Why this engine runs the model, in plain words. */
  engine_reason: string;
  /** The most threads one decode may use. */
  threads: number;
  /** With `threads: auto`: the count chosen per batch size (tokens per decode) and each candidate's measured ms per token. */
  thread_choices: { tokens: string; threads: number; ms_per_token: Record<string, number> }[];
  context_size: number;
  sequences: number;
  busy: number;
  queued: number;
  generated_tokens: number;
  /** Bytes the model and its context take (weights plus context state). */
  memory_bytes?: number;
  /** The server engine's process: its id, and how often it was restarted after a crash. */
  process?: { pid: number; restarts: number };
  /** Server engine: prompt tokens llama-server evaluated, and reused from its slot or RAM caches, since the model loaded. */
  prompt_tokens?: { evaluated: number; reused: number };
}

export interface ProviderStatus {
  name: string;
  /** The base URL without user info, query or fragment. */
  base_url: string;
  ok: boolean;
  error?: string;
  models: number;
}

export interface ServerStatus {
  version: string;
  address: { host: string; port: number } | null;
  data_dir: string;
  models_dirs: string[];
  loaded: LoadedModelStatus[];
  providers: ProviderStatus[];
  /** The engine's memory budget for loaded models. */
  memory_budget_bytes?: number;
  /** The engine setting in force and the state of the llama-server build. */
  engine: { setting: EngineSetting; build: EngineBuildStatus };
}

/** Load progress of one local model, as the status stream reports it. */
export type ModelLoadState =
  { id: string; state: 'loading'; fraction: number } | { id: string; state: 'ready' } | { id: string; state: 'failed'; message: string };

/** What one loaded model was doing over one sampling interval. */
export interface ModelActivity {
  id: string;
  tokens_per_second: number;
  busy: number;
  queued: number;
  memory_bytes: number;
}

export interface ActivitySample {
  /** Milliseconds since the epoch. */
  at: number;
  models: ModelActivity[];
}

/**
 * GET /admin/events (server-sent events, `data: <json>`): a `snapshot` first, then `sample`
 * every few seconds, `load` while a model loads, and `download` when a download changes.
 */
export type StatusEvent =
  | {
      type: 'snapshot';
      memory_budget_bytes: number;
      /** Recent samples, oldest first (the last few minutes). */
      samples: ActivitySample[];
      /** Models loading now. */
      loading: ModelLoadState[];
      downloads: ModelDownload[];
    }
  | { type: 'sample'; sample: ActivitySample; memory_budget_bytes: number }
  | { type: 'load'; load: ModelLoadState }
  | { type: 'download'; download: ModelDownload };

/** POST /admin/session: the one-time code from a sign-in link (the part after `#`). */
export interface SignInRequest {
  code: string;
}

/** POST /admin/session/links: a one-time sign-in link for the app. */
export interface SignInLink {
  /** `http://127.0.0.1:PORT/sign-in#CODE`: opening it signs the app in on this machine. */
  url: string;
  expires_at: string;
}
