/** Wire types of the loopback-only /admin routes. */
import type { ModelOverride } from './config.js';
import type { MemoryFit, ModelDownload } from './model-library.js';

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

/** `models.native_build`: auto builds llama-server natively for this CPU in the background after the quick build; off never does. */
export type NativeBuildSetting = 'auto' | 'off';

/**
 * The native llama-server build (the whole llama.cpp tree compiled for this CPU): the setting in
 * force and the build's state. `absent` with a reason when it is not made (the setting is off,
 * the quick build is not ready yet); `failed` keeps its reason until a new llama.cpp version or
 * POST /admin/engine/native-build.
 */
export interface NativeBuildStatus {
  setting: NativeBuildSetting;
  build: EngineBuildStatus;
}

/** Which llama-server binary runs a model: the quick build on node-llama-cpp's prebuilt libraries, or the native build. */
export type ServerBinary = 'prebuilt' | 'native';

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
  /** Server engine: the multimodal projector (mmproj file) loaded beside the model, so it takes images or audio. */
  projector?: string;
  /** Server engine: the llama-server binary its process runs. */
  build?: ServerBinary;
  /** Server engine, a draft model configured: the draft and the tokens it proposed and the model accepted since the load, or why the model loaded without it. */
  draft?: { model: string; tokens: number; accepted: number } | { off: string };
}

/**
 * The circuit of one pool endpoint: `closed` takes requests, `open` takes none (it failed several
 * times in a row) until a probe, `half_open` is being probed (one request or check decides).
 */
export type EndpointCircuit = 'closed' | 'open' | 'half_open';

/** One endpoint of a provider: its health and load, the same figures GET /metrics reports. */
export interface ProviderEndpointStatus {
  /** The endpoint's URL without user info, query or fragment. */
  url: string;
  circuit: EndpointCircuit;
  weight: number;
  max_concurrent: number | null;
  /** Requests sent to it and not finished yet (streams count until they end). */
  outstanding: number;
  /** Requests moved from it to another endpoint since Hearth started. */
  failovers: number;
  consecutive_failures: number;
  /** Seconds until an open circuit is probed, or until a Retry-After the endpoint gave runs out. */
  retry_in_seconds?: number;
  /** Why the last check or request failed, in words (no secrets). */
  last_error?: string;
}

export interface ProviderStatus {
  name: string;
  /** The base URL without user info, query or fragment (a pool's: its first endpoint). */
  base_url: string;
  ok: boolean;
  error?: string;
  models: number;
  /** Its endpoints: one for `base_url`, several for a pool (`endpoints`). */
  endpoints: ProviderEndpointStatus[];
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
  /** The engine setting in force, the state of the llama-server build, and of its native build (absent from companions before it). */
  engine: { setting: EngineSetting; build: EngineBuildStatus; native?: NativeBuildStatus };
  /** The listener for apps that expect Ollama (server.ollama); absent from companions before it. */
  ollama_listener?: OllamaListenerStatus;
  /** When the serving companion started (ISO 8601): after a restart (POST /admin/restart) it is later. Absent from companions before it. */
  started_at?: string;
}

/**
 * POST /admin/restart (202): the companion stops as it does at Ctrl+C (open streams end with a
 * shutdown error) and starts again in the same terminal, with the same data folder.
 */
export interface RestartAnswer {
  restarting: true;
  /** Where it answers again: the same address, unless the port in the configuration was changed. */
  url: string;
  /** When the companion that answered started; GET /admin/status answers a later `started_at` once the new one runs. */
  started_at: string;
}

/**
 * The Ollama listener: `off` (server.ollama.enabled is false), `listening` at `url`, or
 * `refused` (it could not open; `problem` says why, such as the port being taken).
 */
export interface OllamaListenerStatus {
  state: 'off' | 'listening' | 'refused';
  url?: string;
  problem?: string;
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

/**
 * POST /admin/session answers this with the session cookie. The proof is the session's second
 * secret: the app keeps it in its own origin's storage and sends it as the `X-Hearth-Session`
 * header on every admin request; the cookie without it opens nothing.
 */
export interface SignInResult {
  proof: string;
  /** When the session ends if it is not used (each use moves this on, up to a year after sign-in). */
  expires_at: string;
}

/**
 * POST /admin/session/requests (no credential): this browser asks a signed-in browser on this
 * machine to let it in. It shows `code` and keeps `secret` (in memory only) to learn the answer.
 */
export interface SignInAsk {
  /** Six letters and digits; the person types them into the signed-in browser. */
  code: string;
  /** Only this browser knows it: it alone picks up the session once the request is approved. */
  secret: string;
  expires_at: string;
}

/** POST /admin/session/requests/answer: the secret of this browser's request. */
export interface SignInAnswerRequest {
  secret: string;
}

/**
 * What became of the request. `approved` carries the session's proof (and the answer sets the
 * session cookie), as POST /admin/session does; approved, refused and expired are answered once.
 */
export interface SignInAnswer {
  state: 'waiting' | 'approved' | 'refused' | 'expired';
  /** The request's expiry while waiting; the session's once approved. */
  expires_at: string;
  /** The session's proof, when approved. */
  proof?: string;
}

/** One browser waiting to be signed in, as a signed-in browser sees it (never its code). */
export interface WaitingSignIn {
  id: string;
  asked_at: string;
  expires_at: string;
}

/** GET /admin/session/requests: the browsers waiting to be signed in, oldest first. */
export interface WaitingSignIns {
  data: WaitingSignIn[];
}

/** POST /admin/session/requests/approve: the code the waiting browser shows. */
export interface SignInApproval {
  code: string;
}

/** DELETE /admin/sessions ("sign out everywhere"): how many sessions were ended. */
export interface SessionsEnded {
  ended: number;
}

/**
 * GET /admin/session (loopback, no credential needed): whether this browser is signed in, and
 * how the person at this machine runs Hearth's commands, so the app can tell them exactly. The
 * folders (the Hearth folder, the models folder, the test model command that names it) are
 * given only to a signed-in browser.
 */
export interface SessionState {
  signed_in: boolean;
  /** The command that prints a sign-in link, as it runs here: `hearth open` or `npm run hearth -- open`. */
  sign_in_command: string;
  /** The command that creates an access key, as it runs here. */
  key_command: string;
  /** How Hearth is started here: `hearth` or `npm start`. */
  start_command: string;
  /** Whether the commands run in the Hearth folder (the npm forms) rather than anywhere (`hearth` installed as a command). */
  in_folder: boolean;
  /** The npm script that writes a small test model into this server's models folder (signed in only). */
  test_model_command?: string;
  /** The Hearth folder, where the npm forms run (signed in only; absent when `hearth` is installed as a command). */
  folder?: string;
  /** The folder where the test model script runs (always the Hearth folder; signed in only). */
  scripts_folder?: string;
  /** This server's own models folder (signed in only). */
  models_dir?: string;
  /** Whether models of LM Studio, Ollama, the Hugging Face cache and llama.cpp are listed. */
  external_models: boolean;
}

/**
 * POST /admin/models/{id}/estimate: the load settings to try (any left out: the model's saved ones,
 * else the models section's). Nothing is saved or loaded.
 */
export type ModelEstimateRequest = ModelOverride;

/** What a local model would take in memory with the settings asked (or saved), as the engine counts it. */
export interface ModelEstimate {
  id: string;
  /** The settings estimated. */
  settings: Required<ModelOverride>;
  /** The model's own saved settings (its entry in models.overrides; empty when it has none). */
  saved: ModelOverride;
  /** What the model follows where it sets nothing itself. */
  defaults: Required<ModelOverride>;
  /** The context the model was trained on; the context size is capped there. */
  trained_context: number | null;
  /** Tokens per sequence it would load with (the setting, capped at the trained context). */
  context_size: number;
  /** Whether a GPU is in use on this machine (models.gpu auto and a GPU llama.cpp can use). */
  gpu: boolean;
  total_layers: number;
  /** Layers that would go to the GPU (auto resolved against its free memory; 0 without a GPU). */
  gpu_layers: number;
  /** Sequences it would load with (auto resolved as the engine does, against the memory left now). */
  parallel: number;
  /** Weights plus a margin for compute buffers. */
  weights_bytes: number;
  /** The context state of all its sequences. */
  context_bytes: number;
  /** weights_bytes + context_bytes. */
  memory_bytes: number;
  /** The part of memory_bytes in GPU memory. */
  gpu_bytes: number;
  /** What the engine would count against its memory budget (contexts on a GPU are not counted). */
  budget_share_bytes: number;
  budget_bytes: number;
  /** budget_share_bytes against budget_bytes, by the rule Discover uses: yes up to 3/4, tight up to all of it, else no. */
  fits: MemoryFit;
  loaded: boolean;
}

/** GET /admin/engine/conversations: the llama-server engine's conversations saved to disk, every model's together. */
export interface SavedConversations {
  /** Saved conversation states (one file each). */
  files: number;
  /** Disk they take, their indexes included. */
  bytes: number;
  /** Disk each model may use for its own (models.slot_cache_mb); past it the least recently used go first. 0 saves none. */
  budget_bytes: number;
  /** Each model that has some: its id (as made safe for a folder name), files and bytes. */
  models: { model: string; files: number; bytes: number }[];
}

/** DELETE /admin/engine/conversations: every saved conversation deleted (as `hearth engine cache clear` does). */
export interface ClearedConversations {
  freed_bytes: number;
}

/** One installed model as a draft for another (speculative decoding), with why it cannot be one. */
export interface DraftCandidate {
  id: string;
  size_bytes: number;
  /** The same architecture as the model (its family). */
  same_family: boolean;
  /** Compatible, smaller than the model and of its family: the choice to suggest. */
  suggested: boolean;
  /** Why it cannot draft for the model, in words; absent when it can. */
  problem?: string;
}

/** GET /admin/models/{id}/drafts: the installed models that could draft for a model, compatible ones first, smaller first. */
export interface DraftCandidates {
  id: string;
  /** The draft configured now (models.overrides.<id>.draft), or null for none. */
  draft: string | null;
  candidates: DraftCandidate[];
}
