/**
 * Wire types of the Responses API (POST/GET/DELETE /v1/responses), following the shapes of the
 * official `openai` client (resources/responses/responses.d.ts). `output_text` is computed by
 * the client SDKs, never sent by the server.
 */
import type { JsonSchema, ReasoningEffort } from './openai.js';

export interface InputTextPart {
  type: 'input_text';
  text: string;
}

/** An image in a user message or a function_call_output: image_url is a data URL (data:image/png;base64,...); `detail` is accepted. */
export interface InputImagePart {
  type: 'input_image';
  image_url?: string;
  /** An uploaded file: refused, Hearth keeps no files. */
  file_id?: string;
  detail?: 'low' | 'high' | 'auto' | 'original';
}

/** An image part as an input_items listing shows it: its detail always said. */
export type ListedImagePart = InputImagePart & { detail: NonNullable<InputImagePart['detail']> };

/** A part of a user message: text or an image (chat completions' input_audio shape is accepted too, for a projector with audio). */
export type InputContentPart = InputTextPart | InputImagePart;

export interface OutputTextPart {
  type: 'output_text';
  text: string;
  /** Hearth cites nothing. */
  annotations: [];
}

/** A message item: a plain input message, or an assistant message taken from an earlier response's output. */
export type MessageItem = InputMessage | OutputMessage;

export interface InputMessage {
  type?: 'message';
  /** Present on a message taken from an earlier input_items listing. */
  id?: string;
  status?: ItemStatus;
  role: 'user' | 'assistant' | 'system' | 'developer';
  /** Images and sounds go in user messages only. */
  content: string | InputContentPart[];
}

export interface FunctionCallItem {
  type: 'function_call';
  id?: string;
  status?: ItemStatus;
  call_id: string;
  name: string;
  /** JSON text of the arguments. */
  arguments: string;
}

export interface FunctionCallOutputItem {
  type: 'function_call_output';
  id?: string;
  status?: ItemStatus;
  call_id: string;
  /** Text, or parts: text and images (OpenAI's function_call_output takes input_image items among them). */
  output: string | (InputTextPart | InputImagePart)[];
}

/** A model's thought as text (a reasoning item's content). */
export interface ReasoningTextPart {
  type: 'reasoning_text';
  text: string;
}

/**
 * A reasoning item: the thought of a model whose chat format has one, before its message. Hearth
 * writes no summaries (`summary` is empty) and encrypts nothing. Sent back in `input`, it is
 * accepted and dropped (chat formats leave earlier thoughts out of the prompt).
 */
export interface ReasoningItem {
  type: 'reasoning';
  id: string;
  summary: { type: 'summary_text'; text: string }[];
  content?: ReasoningTextPart[];
  encrypted_content?: string | null;
  status?: ItemStatus;
}

export type InputItem = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem;

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

/** A function tool in the Responses flat shape (no nested `function` object). */
export interface ResponseFunctionTool {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: JsonSchema | null;
  strict?: boolean | null;
}

/** A function tool as a Response object lists it: every field present. */
export type ListedFunctionTool = { [Field in keyof ResponseFunctionTool]-?: Exclude<ResponseFunctionTool[Field], undefined> };

export type ResponseToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; name: string };

export type TextFormat =
  { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; name: string; schema: JsonSchema; description?: string; strict?: boolean | null };

export interface ResponseCreateRequest {
  model: string;
  input: string | InputItem[];
  instructions?: string | null;
  tools?: ResponseFunctionTool[];
  tool_choice?: ResponseToolChoice;
  text?: { format?: TextFormat };
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  stream?: boolean | null;
  /** Defaults to true: the response is kept so previous_response_id and GET can find it. */
  store?: boolean | null;
  previous_response_id?: string | null;
  metadata?: Record<string, string> | null;
  parallel_tool_calls?: boolean | null;
  /** At most 256 characters. */
  user?: string;
  /** Requests with the same key share a prompt cache (a provider pool keeps them on one endpoint); at most 256 characters. */
  prompt_cache_key?: string;
  /** `effort`: as chat completions' reasoning_effort (none turns thinking off); `summary` is accepted (Hearth writes none). */
  reasoning?: { effort?: ReasoningEffort | null; summary?: 'auto' | 'concise' | 'detailed' | null } | null;
}

export interface OutputMessage {
  type: 'message';
  id: string;
  status: ItemStatus;
  role: 'assistant';
  content: OutputTextPart[];
}

export interface OutputFunctionCall {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: ItemStatus;
}

export type OutputItem = OutputMessage | OutputFunctionCall | ReasoningItem;

export type ResponseStatus = 'completed' | 'incomplete' | 'failed' | 'in_progress';

export interface ResponseUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens_details: { reasoning_tokens: number };
}

/** The Response object: answered by POST and GET, carried by the lifecycle stream events. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  model: string;
  output: OutputItem[];
  usage: ResponseUsage | null;
  incomplete_details: { reason: 'max_output_tokens' } | null;
  error: { code: 'server_error'; message: string } | null;
  instructions: string | null;
  tools: ListedFunctionTool[];
  tool_choice: ResponseToolChoice;
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  text: { format: TextFormat };
  temperature: number | null;
  top_p: number | null;
  max_output_tokens: number | null;
  metadata: Record<string, string>;
  store: boolean;
  truncation: 'disabled';
  user?: string;
}

export interface ResponseDeleted {
  id: string;
  object: 'response';
  deleted: true;
}

type LifecycleEventType = 'response.created' | 'response.in_progress' | 'response.completed' | 'response.incomplete' | 'response.failed';

/** Streaming events, sent as `event: <type>\ndata: <json>\n\n`; sequence_number counts from 0. */
export type ResponseStreamEvent =
  | { [Type in LifecycleEventType]: { type: Type; sequence_number: number; response: ResponseObject } }[LifecycleEventType]
  | { [Type in 'response.output_item.added' | 'response.output_item.done']: { type: Type; sequence_number: number; output_index: number; item: OutputItem } }[
      'response.output_item.added' | 'response.output_item.done']
  | {
      [Type in 'response.content_part.added' | 'response.content_part.done']: {
        type: Type;
        sequence_number: number;
        item_id: string;
        output_index: number;
        content_index: number;
        part: OutputTextPart | ReasoningTextPart;
      };
    }['response.content_part.added' | 'response.content_part.done']
  | { type: 'response.reasoning_text.delta'; sequence_number: number; item_id: string; output_index: number; content_index: number; delta: string }
  | { type: 'response.reasoning_text.done'; sequence_number: number; item_id: string; output_index: number; content_index: number; text: string }
  | { type: 'response.output_text.delta'; sequence_number: number; item_id: string; output_index: number; content_index: number; delta: string; logprobs: [] }
  | { type: 'response.output_text.done'; sequence_number: number; item_id: string; output_index: number; content_index: number; text: string; logprobs: [] }
  | { type: 'response.function_call_arguments.delta'; sequence_number: number; item_id: string; output_index: number; delta: string }
  | { type: 'response.function_call_arguments.done'; sequence_number: number; item_id: string; output_index: number; name: string; arguments: string }
  | { type: 'error'; sequence_number: number; code: string | null; message: string; param: string | null };

/** An input item as GET /v1/responses/{id}/input_items lists it: with an id, status and content parts. */
export type ListedInputItem =
  | { type: 'message'; id: string; status: ItemStatus; role: 'user' | 'system' | 'developer'; content: (InputTextPart | ListedImagePart)[] }
  | (OutputMessage & { role: 'assistant' })
  | (Required<Omit<FunctionCallItem, 'status'>> & { status: ItemStatus })
  | { type: 'function_call_output'; id: string; status: ItemStatus; call_id: string; output: string | (InputTextPart | ListedImagePart)[] }
  | ReasoningItem;

/** GET /v1/responses/{id}/input_items: a cursor page (`after`, `before`, `limit`, `order`). */
export interface InputItemList {
  object: 'list';
  data: ListedInputItem[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}
