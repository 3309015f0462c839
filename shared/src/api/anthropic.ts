/**
 * Wire types of Anthropic's Messages API as Hearth serves it (POST /v1/messages and
 * /v1/messages/count_tokens): what the official SDK and Claude Code send and read.
 */
import type { JsonSchema } from './openai.js';

/** A prompt-cache breakpoint: accepted and ignored (Hearth reuses a prompt's cached prefix on its own). */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface TextBlockParam {
  type: 'text';
  text: string;
  cache_control?: CacheControl | null;
}

export interface ImageBlockParam {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
  cache_control?: CacheControl | null;
}

export interface ToolUseBlockParam {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: CacheControl | null;
}

export interface ToolResultBlockParam {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | (TextBlockParam | ImageBlockParam)[];
  is_error?: boolean;
  cache_control?: CacheControl | null;
}

export interface ThinkingBlockParam {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface RedactedThinkingBlockParam {
  type: 'redacted_thinking';
  data: string;
}

export type ContentBlockParam = TextBlockParam | ImageBlockParam | ToolUseBlockParam | ToolResultBlockParam | ThinkingBlockParam | RedactedThinkingBlockParam;

/** `system`: an instruction in the middle of the conversation (Claude Code sends its environment so), text only. */
export interface MessageParam {
  role: 'user' | 'assistant' | 'system';
  content: string | ContentBlockParam[];
}

/** A tool the client runs (Hearth runs no server tools: a tool with another `type` is refused). */
export interface ToolParam {
  name: string;
  description?: string;
  input_schema: JsonSchema;
  type?: 'custom';
  cache_control?: CacheControl | null;
}

export type ToolChoiceParam =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'none' }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean };

/** `adaptive`: the model decides how long it thinks (enabled, without a budget). */
export type ThinkingParam = { type: 'enabled'; budget_tokens: number } | { type: 'disabled' } | { type: 'adaptive' };

/** What both routes read of a conversation. */
interface Conversation {
  model: string;
  messages: MessageParam[];
  system?: string | TextBlockParam[];
  tools?: ToolParam[];
  tool_choice?: ToolChoiceParam;
  thinking?: ThinkingParam;
}

export interface MessageCreateRequest extends Conversation {
  /** Required; a ceiling: a reply stops at the end of the model's context before it (stop_reason max_tokens). */
  max_tokens: number;
  stream?: boolean;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  /** `user_id` ties a conversation's requests to one endpoint of a provider pool (its prompt cache). */
  metadata?: { user_id?: string | null };
}

export type CountTokensRequest = Conversation;

export interface CountTokensResponse {
  input_tokens: number;
}

export interface TextBlock {
  type: 'text';
  text: string;
  citations: null;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  /** Hearth signs nothing: an opaque constant, so clients that send thinking back keep it. */
  signature: string;
}

export type ContentBlock = TextBlock | ToolUseBlock | ThinkingBlock;

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use';

export interface MessageUsage {
  /** Prompt tokens evaluated for this request (those read from the cache are not among them). */
  input_tokens: number;
  output_tokens: number;
  /** Always 0: nothing is written on request; Hearth caches every prompt's prefix. */
  cache_creation_input_tokens: number;
  /** Prompt tokens reused from the engine's cache. */
  cache_read_input_tokens: number;
}

export interface Message {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: MessageUsage;
}

export type ContentBlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string };

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error';

/** Anthropic's error shape: the body of an error answer, and the data of a stream's `error` event. */
export interface AnthropicErrorBody {
  type: 'error';
  error: { type: ErrorType; message: string };
}

/** The events of a streamed reply, each sent as `event: <type>` with itself as the data. */
export type MessageStreamEvent =
  | { type: 'message_start'; message: Message }
  | { type: 'content_block_start'; index: number; content_block: ContentBlock }
  | { type: 'ping' }
  | { type: 'content_block_delta'; index: number; delta: ContentBlockDelta }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason: StopReason; stop_sequence: string | null }; usage: MessageUsage }
  | { type: 'message_stop' }
  | AnthropicErrorBody;
