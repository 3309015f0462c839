/**
 * Ollama's API (`/api/*`), as Hearth answers it: the requests and answers of the routes apps with
 * an "Ollama" provider call (chat, generate, embed, the model list). Field names are Ollama's.
 * Times are RFC 3339 strings, durations nanoseconds.
 */

/** Sampling settings (`options`); Hearth reads these and ignores the rest of Ollama's. */
export interface OllamaOptions {
  temperature?: number;
  top_p?: number;
  top_k?: number;
  /** Tokens to generate at most; -1 (or left out) is no limit but the context. */
  num_predict?: number;
  /** Accepted but not applied per request: the context a model is loaded with is its setting's (see docs/ollama.md). */
  num_ctx?: number;
  stop?: string[];
  seed?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
}

/** `think`: on or off, or an effort word (a thought budget). */
export type OllamaThink = boolean | 'low' | 'medium' | 'high';

/** `format`: "json", or a JSON schema the answer follows. */
export type OllamaFormat = 'json' | Record<string, unknown>;

/** "5m", "1h30m", a number of seconds, 0 (unload after the reply) or a negative number (keep). */
export type OllamaKeepAlive = string | number;

export interface OllamaToolCall {
  function: { name: string; arguments: Record<string, unknown>; index?: number };
  id?: string;
}

export interface OllamaMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  thinking?: string;
  /** Base64 images (vision models). */
  images?: string[];
  tool_calls?: OllamaToolCall[];
  /** A tool message: the tool whose result this is. */
  tool_name?: string;
  /** A tool message: the call it answers (newer clients send it). */
  tool_call_id?: string;
}

export interface OllamaTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** POST /api/chat */
export interface OllamaChatRequest {
  model: string;
  messages?: OllamaMessage[];
  tools?: OllamaTool[];
  format?: OllamaFormat | '';
  options?: OllamaOptions;
  /** Default true: NDJSON lines; false: one JSON object. */
  stream?: boolean;
  keep_alive?: OllamaKeepAlive;
  think?: OllamaThink;
}

/** POST /api/generate */
export interface OllamaGenerateRequest {
  model: string;
  prompt?: string;
  /** Text after the cursor: fill-in-the-middle. */
  suffix?: string;
  system?: string;
  /** true: the prompt is sent as it is, without the chat template. */
  raw?: boolean;
  images?: string[];
  format?: OllamaFormat | '';
  options?: OllamaOptions;
  stream?: boolean;
  keep_alive?: OllamaKeepAlive;
  think?: OllamaThink;
  /** Older clients' conversation state; Hearth keeps none and ignores it. */
  context?: number[];
}

/** The timing and token counts of a finished generation (nanoseconds). */
export interface OllamaMetrics {
  total_duration: number;
  load_duration: number;
  prompt_eval_count: number;
  prompt_eval_duration: number;
  eval_count: number;
  eval_duration: number;
}

/** Why a generation ended: stop (or a tool call), length (num_predict), load or unload (an empty prompt). */
export type OllamaDoneReason = 'stop' | 'length' | 'load' | 'unload';

/** One line of /api/chat (the last has done: true and the metrics). */
export interface OllamaChatChunk extends Partial<OllamaMetrics> {
  model: string;
  created_at: string;
  message: OllamaMessage;
  done: boolean;
  done_reason?: OllamaDoneReason;
}

/** One line of /api/generate. */
export interface OllamaGenerateChunk extends Partial<OllamaMetrics> {
  model: string;
  created_at: string;
  response: string;
  thinking?: string;
  done: boolean;
  done_reason?: OllamaDoneReason;
  /** Always empty: Hearth keeps no token context between requests. */
  context?: number[];
}

/** POST /api/embed */
export interface OllamaEmbedRequest {
  model: string;
  input: string | string[];
  truncate?: boolean;
  dimensions?: number;
  keep_alive?: OllamaKeepAlive;
  options?: OllamaOptions;
}

export interface OllamaEmbedResponse {
  model: string;
  embeddings: number[][];
  total_duration: number;
  load_duration: number;
  prompt_eval_count: number;
}

/** POST /api/embeddings (Ollama's older route: one prompt, one vector). */
export interface OllamaEmbeddingsRequest {
  model: string;
  prompt: string;
  keep_alive?: OllamaKeepAlive;
  options?: OllamaOptions;
}

export interface OllamaEmbeddingsResponse {
  embedding: number[];
}

export interface OllamaModelDetails {
  parent_model: string;
  format: 'gguf';
  family: string;
  families: string[];
  /** Ollama writes "7.6B"; empty when the file does not say. */
  parameter_size: string;
  quantization_level: string;
}

/** A model of GET /api/tags. */
export interface OllamaModel {
  name: string;
  model: string;
  modified_at: string;
  size: number;
  digest: string;
  details: OllamaModelDetails;
}

/** GET /api/tags */
export interface OllamaModelList {
  models: OllamaModel[];
}

/** A loaded model of GET /api/ps. */
export interface OllamaRunningModel extends OllamaModel {
  /** When the idle unload will unload it (models.idle_unload_seconds after its last request). */
  expires_at: string;
  size_vram: number;
  context_length: number;
}

/** GET /api/ps */
export interface OllamaRunningList {
  models: OllamaRunningModel[];
}

/** POST /api/show (`model`, or `name` as older clients send it). */
export interface OllamaShowRequest {
  model?: string;
  name?: string;
  verbose?: boolean;
}

export interface OllamaShowResponse {
  modelfile: string;
  parameters: string;
  template: string;
  details: OllamaModelDetails;
  model_info: Record<string, unknown>;
  /** completion, tools, vision, thinking, embedding, insert. */
  capabilities: string[];
  modified_at: string;
}

/** POST /api/pull (`model`, or `name` as older clients send it). */
export interface OllamaPullRequest {
  model?: string;
  name?: string;
  insecure?: boolean;
  stream?: boolean;
}

/** A progress line of /api/pull. */
export interface OllamaProgress {
  status: string;
  digest?: string;
  total?: number;
  completed?: number;
}

/** GET /api/version */
export interface OllamaVersion {
  version: string;
}

/** Every error of /api/*: the message, with the HTTP status. */
export interface OllamaError {
  error: string;
}
