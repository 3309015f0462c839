/** Protocol-neutral generation types: both OpenAI protocols convert into these. */
import type { JsonSchema } from '../../../shared/src/api/openai.js';

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

export const CHAT_FIELDS: RequestFields = { history: 'messages', toolParameters: (index) => `tools[${index}].function.parameters`, schema: 'response_format.json_schema.schema' };
export const RESPONSES_FIELDS: RequestFields = { history: 'input', toolParameters: (index) => `tools[${index}].parameters`, schema: 'text.format.schema' };

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'cancelled';

export interface GenerationResult {
  text: string;
  toolCalls: ToolCallRecord[];
  finishReason: FinishReason;
  promptTokens: number;
  completionTokens: number;
}
