/** Wire types of the OpenAI-compatible routes (/v1/models, /v1/chat/completions, /v1/embeddings). */
import type { ErrorBody } from './errors.js';

/**
 * What a model can do. `completion`: raw prompts (POST /v1/completions); `fim`: fill-in-the-middle
 * (a suffix, POST /infill), from the file's FIM tokens; `reasoning`: a chat format with a thought
 * segment; `vision` and `audio`: media input (a projector).
 */
export type Capability = 'chat' | 'completion' | 'fim' | 'tools' | 'vision' | 'audio' | 'reasoning' | 'embedding';

/** Where a model runs: `local` on this machine, `provider` at a configured model provider (`<provider>/<model>`). */
export type ModelSource = 'local' | 'provider';

/**
 * What a reader of a model list takes as `source`: companions before this release said `remote`
 * for a provider model. Readers treat `remote` as `provider` for one more release.
 */
export type ModelSourceAsRead = ModelSource | 'remote';

export interface ModelRecord {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  /** Extra fields a plain OpenAI client ignores. */
  source?: ModelSource;
  loaded?: boolean;
  size_bytes?: number | null;
  /** What the model was trained for (from its file). */
  context_length?: number | null;
  /**
   * Tokens one request may use on this server (prompt and reply together): the loaded context's
   * size, or the size it will be loaded with (the configured context size, at most context_length).
   */
  context_window?: number | null;
  /** Read from the file name (Q4_K_M, Q8_0, F16, …); null when it does not say. */
  quantization?: string | null;
  capabilities?: Capability[];
  error?: string;
}

export interface ModelList {
  object: 'list';
  data: ModelRecord[];
}

export interface TextPart {
  type: 'text';
  text: string;
}

/** An image as a content part: a data URL (data:image/png;base64,...), or an http(s) URL where the owner allows remote images. */
export interface ImageUrlPart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

/** A sound as a content part: base64 WAV or MP3 bytes (local models whose projector has an audio encoder take it). */
export interface InputAudioPart {
  type: 'input_audio';
  input_audio: { data: string; format: 'wav' | 'mp3' };
}

/** A user message's text and image parts (what agent runs take too). */
export type UserContentPart = TextPart | ImageUrlPart;

/** What a chat completions user message's content parts may be: text, images and sounds. */
export type ChatUserPart = UserContentPart | InputAudioPart;

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system' | 'developer'; content: string | TextPart[]; name?: string }
  | { role: 'user'; content: string | ChatUserPart[]; name?: string }
  /** `reasoning_content`: the thought of an earlier turn, sent back as a client received it; accepted, and left to the chat format (most drop it). */
  | { role: 'assistant'; content?: string | TextPart[] | null; tool_calls?: ToolCall[]; name?: string; reasoning_content?: string | null }
  /** Typed as OpenAI's (text parts); image_url parts are taken here too (as vLLM and llama-server take them), read in convert.ts. */
  | { role: 'tool'; content: string | TextPart[]; tool_call_id: string };

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: JsonSchema; strict?: boolean };
}

export type ToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

export type JsonSchema = Record<string, unknown>;

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; description?: string; schema?: JsonSchema; strict?: boolean } };

/**
 * How much a reasoning model thinks (OpenAI's `reasoning_effort`; Responses' `reasoning.effort`):
 * `none` turns thinking off; the others give the thought a budget (docs/api.md).
 */
export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high';

/** The sampling fields chat completions and legacy completions share. */
export interface OpenaiSampling {
  temperature?: number | null;
  top_p?: number | null;
  seed?: number | null;
  stop?: string | string[] | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
}

export interface ChatCompletionRequest extends OpenaiSampling {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  tools?: FunctionTool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: ResponseFormat;
  n?: number | null;
  logprobs?: boolean | null;
  /** At most 256 characters. */
  user?: string;
  /** Requests with the same key share a prompt cache (a provider pool keeps them on one endpoint); at most 256 characters. */
  prompt_cache_key?: string;
  reasoning_effort?: ReasoningEffort | null;
  /** llama-server's template arguments; of them, `enable_thinking` (false: no thought) applies to local models. */
  chat_template_kwargs?: { enable_thinking?: boolean } | null;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Of completion_tokens, those a reasoning model spent on its thought. */
  completion_tokens_details?: { reasoning_tokens: number };
  /** Of prompt_tokens, those the engine found already evaluated in its cache (0 when it reports none). */
  prompt_tokens_details?: { cached_tokens: number };
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  system_fingerprint: string;
  choices: {
    index: number;
    /** `reasoning_content`: the model's thought, when its chat format has one (not part of content). */
    message: { role: 'assistant'; content: string | null; reasoning_content?: string; tool_calls?: ToolCall[]; refusal: null };
    finish_reason: FinishReason;
    logprobs: null;
  }[];
  usage: Usage;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  system_fingerprint: string;
  choices: {
    index: number;
    delta: {
      role?: 'assistant';
      content?: string | null;
      /** A piece of the model's thought; it streams before the answer's content. */
      reasoning_content?: string;
      tool_calls?: { index: number; id?: string; type?: 'function'; function: { name?: string; arguments: string } }[];
    };
    finish_reason: FinishReason | null;
    logprobs: null;
  }[];
  usage?: Usage | null;
}

/**
 * GET /health: 200 with status `ok`, or 503 with status `error` and the reason in OpenAI's error
 * shape (`data_folder_gone`: the data folder was deleted or moved while Hearth ran).
 */
export interface HealthStatus {
  status: 'ok' | 'error';
  version: string;
  error?: ErrorBody['error'];
}

/** POST /v1/embeddings. */
export interface EmbeddingRequest {
  model: string;
  /** A text or an array of texts. Token arrays (number[] or number[][]) are refused by local models. */
  input: string | string[] | number[] | number[][];
  /** `float` (default): arrays of numbers; `base64`: little-endian float32 bytes, base64-encoded. */
  encoding_format?: 'float' | 'base64';
  /** Only a model's own vector size is accepted by local models. */
  dimensions?: number;
  /** At most 256 characters. */
  user?: string;
}

export interface Embedding {
  object: 'embedding';
  index: number;
  /** Unit length; a base64 string when encoding_format is base64. */
  embedding: number[] | string;
}

export interface EmbeddingList {
  object: 'list';
  data: Embedding[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/** POST /v1/completions: OpenAI's legacy completions, a prompt without the chat template. */
export interface CompletionRequest extends OpenaiSampling {
  model: string;
  /** One prompt: a string, or an array of one string. */
  prompt: string | string[];
  /** Text after the completion: fill-in-the-middle with the model's FIM tokens. */
  suffix?: string | null;
  /** Default 16, as OpenAI's. */
  max_tokens?: number | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  /** Only 1. */
  n?: number | null;
  /** Only false. */
  echo?: boolean | null;
  /** Not supported: only null. */
  logprobs?: number | null;
  /** Only 1. */
  best_of?: number | null;
  user?: string;
}

export interface CompletionChoice {
  text: string;
  index: number;
  logprobs: null;
  finish_reason: 'stop' | 'length' | null;
}

/** The answer of POST /v1/completions, and (object `text_completion` too) each streamed chunk. */
export interface Completion {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  system_fingerprint: string;
  choices: CompletionChoice[];
  /** In the answer; in a stream only the last chunk's (with `stream_options.include_usage`), null before it. */
  usage?: Usage | null;
}
