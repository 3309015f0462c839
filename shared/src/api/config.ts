/** The configuration document (`<data-dir>/config.yaml`, `version: 1`). Secrets appear only as references. */

/** `secret:NAME` (from the secrets file) or `env:NAME` (from the environment). */
export type SecretReference = `secret:${string}` | `env:${string}`;

export interface ServerSettings {
  host: string;
  port: number;
  /** Largest accepted request body on inference routes, in MiB. */
  body_limit_mb: number;
  auth: { required: boolean };
  cors: { origins: string[] };
  allowed_hosts: string[];
  limits: {
    admin_body_kb: number;
    tools_body_mb: number;
    memory_body_mb: number;
    images_body_mb: number;
    /** Time allowed to receive a whole request from the client. */
    request_timeout_seconds: number;
    /** Concurrent requests one access key may have open. */
    streams_per_key: number;
  };
  /** The secure channel: a second listener, TLS 1.3 only, for paired devices. */
  remote: RemoteChannelSettings;
  /** A listener on 127.0.0.1 that answers Ollama's API (/api/…) on Ollama's port, for apps that expect Ollama there. */
  ollama: OllamaListenerSettings;
}

export interface OllamaListenerSettings {
  enabled: boolean;
  /** Ollama's own port, 11434, unless set; 0 picks a free one. */
  port: number;
}

export interface RemoteChannelSettings {
  enabled: boolean;
  host: string;
  port: number;
}

export interface ModelSettings {
  /** Extra folders scanned for .gguf files, besides `<data-dir>/models`. */
  dirs: string[];
  /** Also list models already on disk from LM Studio, Ollama, the Hugging Face cache and llama.cpp. */
  external_sources: boolean;
  gpu: 'auto' | 'cpu';
  /** Which engine runs chat models: auto (llama-server when its build is ready, else in-process), server, in-process. */
  engine: 'auto' | 'server' | 'in-process';
  /** auto: once the quick llama-server build is ready, build it natively for this CPU in the background and switch to it; off: never. */
  native_build: 'auto' | 'off';
  threads: number | 'auto';
  context_size: number;
  parallel: number | 'auto';
  queue_limit: number;
  idle_unload_seconds: number;
  /** Memory the loaded models may use together; 0 means half of the machine's memory. */
  memory_budget_mb: number;
  /** Disk for each model's saved conversations on the llama-server engine, in MB (0 saves none). */
  slot_cache_mb: number;
  /** Load settings of single local models, by id; what one leaves out follows the settings above. */
  overrides: Record<string, ModelOverride>;
  /** Remote http(s) image URLs in chat requests to local models (off unless enabled). */
  remote_images: RemoteImageSettings;
}

/**
 * `models.remote_images`: whether a chat request's http(s) image URL is fetched for a local model.
 * Public addresses only, unless the host is named in `allowed_hosts` (`host` or `host:port`).
 */
export interface RemoteImageSettings {
  enabled: boolean;
  allowed_hosts: string[];
}

/** How one local model is loaded (`models.overrides.<id>`); a change applies when the model is next loaded. */
export interface ModelOverride {
  /** Tokens per sequence, capped at the model's training context. */
  context_size?: number;
  /** Layers offloaded to the GPU: auto (as many as its memory holds), or a number; 0 keeps the model on the CPU. */
  gpu_layers?: number | 'auto';
  threads?: number | 'auto';
  /** Sequences (concurrent requests batched together). */
  parallel?: number | 'auto';
  /** Its multimodal projector (mmproj .gguf) by absolute path, or `none`; by default one found beside the model file. */
  projector?: string;
  /** A draft model for speculative decoding (a local model id with the same vocabulary, smaller), or `none`; llama-server engine only. */
  draft?: string;
}

/** One server of a provider pool; every endpoint of a provider serves the same model ids. */
export interface ProviderEndpoint {
  /** The server's OpenAI base URL, as `base_url` would be (e.g. http://10.0.0.5:8000/v1). */
  url: string;
  /** Share of the traffic relative to the other endpoints (default 1). */
  weight?: number;
  /** Most requests this endpoint is sent at once (default: no limit). */
  max_concurrent?: number;
}

/** How a pool's endpoints are checked; the defaults suit a server on the local network. */
export interface ProviderHealthSettings {
  /** Path on each endpoint's origin that is asked (`/health`); default: `/health` where the server has one, else `GET {url}/models`. */
  path?: string;
  /** Seconds between checks of a healthy endpoint (default 10). */
  interval_seconds?: number;
  /** Consecutive failures (checks or requests) that open an endpoint's circuit (default 3). */
  failures_to_open?: number;
  /** Seconds an open circuit waits before one probe; doubled after each failed probe, up to 60 (default 2). */
  open_seconds?: number;
}

export interface ProviderSettings {
  name: string;
  /** One server; or list several in `endpoints` (a pool). One of the two is given. */
  base_url?: string;
  /** A pool: several servers of the same models, health-checked, with failover and conversation affinity. */
  endpoints?: ProviderEndpoint[];
  health?: ProviderHealthSettings;
  api_key?: SecretReference;
  models?: string[];
  headers?: Record<string, string>;
  timeout_ms?: number;
  /** Models of this provider served through its OpenAI Images routes; listed by GET /v1/images/models as `<provider>/<model>`. */
  image_models?: string[];
}

/** docs/memory.md (Settings); out-of-range values are clamped into range when saved. */
export interface MemorySettings {
  /** 100-4000: most tokens of retrieved memory inserted into a request. */
  memory_budget_tokens: number;
  /** 10-3600: quiet interval before a conversation is distilled. */
  summary_debounce_seconds: number;
  /** 1-168: scheduled consolidation interval. */
  consolidation_interval_hours: number;
  /** 0-1: consolidation prunes episodes and candidate facts below this salience. */
  salience_floor: number;
  /** 0-3650: days historical material is kept; 0 keeps it forever. */
  episode_retention_days: number;
  /** Local model id that distils signals; none means signals stay pending. */
  model?: string;
  /** Local embedding model id; when set, search is hybrid (lexical + vectors). */
  embedding_model?: string;
}

export interface ConfigDocument {
  version: 1;
  server: ServerSettings;
  models: ModelSettings;
  providers: ProviderSettings[];
  memory: MemorySettings;
  agents: AgentSettings[];
  agents_defaults: AgentDefaults;
  images: ImageSettings;
  mcp_services: McpServiceSettings[];
  media_providers: MediaProviderSettings[];
  /** Other machines' Hearth this companion is paired with (it is the device there). */
  remote_hosts: RemoteHostSettings[];
  /** Cloud workspaces whose published A2A agents this companion may dispatch work to. */
  cloud_workspaces: CloudWorkspaceSettings[];
}

/** A host paired with through `hearth remote add`; its granted agents appear as `<name>/<agent>`. */
export interface RemoteHostSettings {
  name: string;
  /** https://HOST:PORT of the host's secure channel. */
  url: string;
  /** SHA-256 fingerprint of the host certificate pinned at pairing. */
  fingerprint: string;
  /** The device's key, certificate and the pinned host certificate (a secret, JSON). */
  credential: SecretReference;
}

/** A cloud workspace: its OAuth sign-in and its published agents (A2A agent cards). */
export interface CloudWorkspaceSettings {
  /** Local name; its agents appear as `cloud:<name>/<agent>`. */
  name: string;
  /** The workspace identifier the sign-in must be bound to. */
  workspace_id: string;
  /** The ID token claim that carries the workspace identifier. */
  workspace_claim: string;
  issuer: string;
  client_id: string;
  client_secret?: SecretReference;
  scopes: string[];
  /** authorization_code: PKCE on a loopback redirect; device_code: the device authorization grant. */
  grant: 'authorization_code' | 'device_code';
  /** Agent card URLs. */
  agent_cards: string[];
  /** A URL answering the workspace's agent list: card URLs or cards. */
  directory?: string;
}

/** What an agent may do with each class of tool. */
export type ToolApproval = 'auto' | 'ask' | 'deny';

export interface AgentSettings {
  /** AGENT_ID_PATTERN (#shared/api/agents), not one of RESERVED_AGENT_IDS. */
  id: string;
  name?: string;
  description?: string;
  instructions?: string;
  /** A local model id or `<provider>/<model>`; an agent without one is listed but cannot run. */
  model?: string;
  /** Exact tool names and globs (`everything_*`) over built-in and MCP service tools. */
  tools: string[];
  tool_policy: { read: ToolApproval; write: ToolApproval; exec: ToolApproval; network: ToolApproval };
  /** Per tool name; wins over the class policy. */
  tool_overrides: Record<string, ToolApproval>;
  /** `required` forces a tool call on the first model call of a run (later calls are `auto`). */
  tool_choice: 'auto' | 'required';
  memory: { enabled: boolean; budget_tokens?: number };
  /** The folder the file and shell tools are confined to; none means no file or shell tools. */
  workspace?: string;
  /** Model calls per run (default 30, at most 120). */
  max_steps: number;
  temperature?: number;
  /** Most tokens one model call may generate. */
  max_tokens?: number;
}

/** Settings every agent shares. */
export interface AgentDefaults {
  /** How long a tool call waits for the owner's decision; no decision counts as deny. */
  approval_timeout_seconds: number;
  /** The longest a shell command may run (and its default). */
  shell_timeout_seconds: number;
  /** Most bytes of one tool's output given back to the model. */
  tool_output_kb: number;
}

/** A hosted (paid) media provider speaking OpenAI's video jobs API. */
export interface MediaProviderSettings {
  name: string;
  api: 'openai_videos';
  base_url: string;
  api_key?: SecretReference;
  headers?: Record<string, string>;
  timeout_ms?: number;
  /** What may be quoted: each model's price, clip lengths and sizes. */
  models: { id: string; usd_per_second: number; seconds: number[]; sizes: string[]; operations: ('video.generate' | 'video.from_image')[] }[];
  /** How long a quote stays valid. */
  quote_ttl_seconds: number;
  /** How often a running job's status is retrieved. */
  poll_interval_seconds: number;
}

export interface ImageSettings {
  dirs: string[];
  /** Paid hosted media (the endpoints are media_providers): whether it may be used, and the month's budget. */
  hosted: { enabled: boolean; monthly_budget_usd: number };
}

/** The class of a tool: what it can do, which decides who may use it (agents' tool_policy, `expose`). */
export type ToolClass = 'read' | 'write' | 'exec' | 'network';

/** Authentication Hearth uses towards an MCP service; secret values are only ever references. */
export type McpServiceAuth =
  | { type: 'none' }
  | { type: 'token'; token: SecretReference }
  | { type: 'headers'; headers: Record<string, SecretReference> }
  | { type: 'oauth'; scope?: string; client_id?: string; client_secret?: SecretReference };

/** An outbound MCP tool service. */
export interface McpServiceSettings {
  /** Identifies the service; its tools appear as `<name>_<tool>`. */
  name: string;
  transport: 'stdio' | 'http';
  /** stdio: the program to run, its arguments, extra environment (values may be references) and working folder. */
  command?: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** http: the complete MCP endpoint (Streamable HTTP, falling back to the older SSE transport). */
  url?: string;
  auth: McpServiceAuth;
  /** Disabled services keep their settings but are never connected. */
  enabled: boolean;
  /** Connect when Hearth starts; otherwise on `hearth mcp reconnect NAME` or the admin route. */
  auto_connect: boolean;
  discovery_timeout_ms: number;
  tool_call_timeout_ms: number;
  /** What external clients (bridge, /mcp) may see: nothing, read and network tools, or every tool. */
  expose: 'none' | 'read' | 'all';
  /** Overrides of the class read from a tool's annotations, by the service's own tool name. */
  tool_classes: Record<string, ToolClass>;
}
