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
}

export type HistoryItem =
  | { role: 'system'; text: string }
  | { role: 'user'; text: string }
  | { role: 'assistant'; text: string; toolCalls: ToolCallRecord[] }
  | { role: 'tool'; callId: string; output: string };

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
}
