/** Protocol-neutral generation types: both OpenAI protocols convert into these. */
import type { Capability, JsonSchema } from '#shared/api/openai.js';

/** What the engine needs to know of a model file; the model registry's records have these fields. */
export interface ModelFile {
  id: string;
  /** Absolute path of the .gguf (first shard for split models). */
  path: string;
  /** All shards. */
  sizeBytes: number;
  capabilities: readonly Capability[];
  /** Its multimodal projector (mmproj), loaded beside it by the llama-server engine so it takes images or audio. */
  projector?: { path: string; sizeBytes: number };
}

export type HistoryItem =
  | { role: 'system'; text: string }
  /** `media`: images or sounds in the message, each at its place in `text` (a model with a projector takes them; see media.ts). */
  | { role: 'user'; text: string; media?: MediaPart[] }
  /** `reasoning`: an earlier turn's thought sent back by a client; each chat format decides (most drop it from the prompt). */
  | { role: 'assistant'; text: string; toolCalls: ToolCallRecord[]; reasoning?: string }
  /** `media`: images in the tool's result, each at its place in `output` (as a user message's; an agent's MCP tool, a client's tool_result). */
  | { role: 'tool'; callId: string; output: string; media?: MediaPart[] };

export interface ToolCallRecord {
  id: string;
  name: string;
  /** JSON text of the arguments. */
  arguments: string;
}

export interface ToolSpec {
  name: string;
  description?: string;
  parameters?: JsonSchema;
}

export type ToolMode = { type: 'auto' } | { type: 'none' } | { type: 'required' } | { type: 'named'; name: string };

export type OutputFormat = { type: 'text' } | { type: 'json'; schema?: JsonSchema };

export interface Sampling {
  temperature?: number;
  topP?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  /** Only the k most likely tokens are sampled (Anthropic's and Ollama's top_k). */
  topK?: number;
}

/** How a model whose chat format has a thought segment thinks (reasoning_effort, Anthropic's thinking, Ollama's think). */
export interface ReasoningControl {
  /** false: no thought (the template's own switch where it has one, else the thought is closed at once). */
  enabled: boolean;
  /** Tokens the thought may take; then it is closed and the answer starts. */
  budgetTokens?: number;
}

/** A prompt sent as it is, without the chat template (completions, fill-in-the-middle). */
export interface RawPrompt {
  prompt: string;
  /** Text after the cursor: the prompt is rendered with the model's own fill-in-the-middle tokens (400 when it has none). */
  suffix?: string;
  /** Other files given as context for fill-in-the-middle (llama.cpp's /infill `input_extra`). */
  extra?: { name: string; text: string }[];
}

/** An image or a sound in a user message or a tool result: its bytes, what they are, and where in the message's text it goes (UTF-16 offset). */
export interface MediaPart {
  kind: 'image' | 'audio';
  data: Buffer;
  /** image/png, image/jpeg, audio/wav, audio/mpeg... (an image's is settled by generation/media-check.ts) */
  mime: string;
  offset: number;
  /** Where the request held it (`messages[0].content[1].image_url.url`), for the errors that name it. */
  param?: string;
  /** A remote image not fetched yet (`data` empty): the generation path fetches it or refuses it before an engine sees it. */
  url?: string;
}

export interface GenerationRequest {
  model: string;
  history: HistoryItem[];
  maxTokens?: number;
  sampling: Sampling;
  stop: string[];
  tools: ToolSpec[];
  toolMode: ToolMode;
  output: OutputFormat;
  signal: AbortSignal;
  /** Called with each piece of generated text as it is produced. */
  onText?: (delta: string) => void;
  /** Set: `history` and `tools` are ignored and this text is the whole prompt (no chat template). */
  raw?: RawPrompt;
  /** Left out: the model's own default (thinking on where its format has a thought segment). */
  reasoning?: ReasoningControl;
  /** Called with each piece of the model's thought as it is produced (never part of `onText`). */
  onReasoning?: (delta: string) => void;
  /** The request's field names, for error messages: they differ between the protocols (default: chat). */
  fields?: RequestFields;
}

export interface RequestFields {
  history: string;
  toolParameters: (index: number) => string;
  schema: string;
}

export const CHAT_FIELDS: RequestFields = {
  history: 'messages',
  toolParameters: (index) => `tools[${index}].function.parameters`,
  schema: 'response_format.json_schema.schema',
};
export const RESPONSES_FIELDS: RequestFields = { history: 'input', toolParameters: (index) => `tools[${index}].parameters`, schema: 'text.format.schema' };

/** Why a generation stopped; the protocols map it onto their own finish reasons. */
export type StopReason = 'stop' | 'length' | 'tool_calls' | 'cancelled';

export interface GenerationResult {
  text: string;
  toolCalls: ToolCallRecord[];
  finishReason: StopReason;
  promptTokens: number;
  completionTokens: number;
  /** The model's thought, when its format has a thought segment (not part of `text`). */
  reasoning?: string;
  /** Of `completionTokens`, those spent on the thought. */
  reasoningTokens?: number;
  /** Of `promptTokens`, those reused from the engine's cache instead of evaluated. */
  cachedTokens?: number;
  /** The entry of the request's `stop` that ended the text (finish reason `stop`), where the engine says which (Anthropic's stop_sequence). */
  stopSequence?: string;
}
