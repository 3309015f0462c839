import type { ErrorBody } from '#shared/api/errors.js';
import type { ChatCompletionChunk, ChatMessage, FinishReason, ReasoningEffort, Usage } from '#shared/api/openai.js';
import { ApiError, events, fromErrorBody, isErrorBody, send } from './client';

export interface Sampling {
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  /** How much a reasoning model thinks; `none` turns thinking off. */
  reasoning_effort?: ReasoningEffort;
}

export interface StreamChatOptions extends Sampling {
  model: string;
  messages: ChatMessage[];
  signal?: AbortSignal;
  onDelta?: (text: string) => void;
  /** A piece of the model's thought (`delta.reasoning_content`, or `delta.reasoning` as some providers name it), before the answer. */
  onReasoning?: (text: string) => void;
}

export interface ChatResult {
  text: string;
  /** The thought, apart from the answer ('' when the model did not think). */
  reasoning: string;
  usage: Usage | null;
  finishReason: FinishReason | null;
}

/** Streams one chat completion; rejects with the abort reason when `signal` is aborted. */
export async function streamChat({ model, messages, signal, onDelta, onReasoning, ...sampling }: StreamChatOptions): Promise<ChatResult> {
  const body: Record<string, unknown> = { model, messages, stream: true, stream_options: { include_usage: true } };
  for (const [key, value] of Object.entries(sampling)) if (value !== undefined && value !== null) body[key] = value;
  const response = await send('/v1/chat/completions', {
    method: 'POST',
    headers: { accept: 'text/event-stream' },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.body) throw new ApiError(response.status, 'invalid_response', 'The companion sent an empty stream.');
  const result: ChatResult = { text: '', reasoning: '', usage: null, finishReason: null };
  for await (const data of events(response.body, signal)) {
    if (data === '[DONE]') return result;
    let chunk: ChatCompletionChunk | ErrorBody;
    try {
      chunk = JSON.parse(data);
    } catch {
      throw new ApiError(response.status, 'invalid_response', `The companion sent an event that is not JSON: ${data.slice(0, 80)}`);
    }
    // An error inside a stream comes with the stream's 200; one of the server's own (the companion shutting
    // down, a failed generation) counts as a 5xx, so the caller checks whether the companion is still there.
    if (isErrorBody(chunk)) throw fromErrorBody(chunk.error.type === 'server_error' ? 503 : response.status, chunk);
    const choice = chunk.choices[0];
    const thought = thoughtOf(choice?.delta);
    if (thought) {
      result.reasoning += thought;
      onReasoning?.(thought);
    }
    const delta = choice?.delta.content;
    if (delta) {
      result.text += delta;
      onDelta?.(delta);
    }
    if (choice?.finish_reason) result.finishReason = choice.finish_reason;
    if (chunk.usage) result.usage = chunk.usage;
  }
  throw new ApiError(response.status, 'stream_interrupted', 'The reply stopped before it was complete.');
}

/** The thought in a delta: `reasoning_content` (DeepSeek, llama-server, Hearth) or `reasoning` (OpenRouter, Ollama's OpenAI API). */
function thoughtOf(delta: { reasoning_content?: string; reasoning?: unknown } | undefined): string {
  const thought = delta?.reasoning_content ?? delta?.reasoning;
  return typeof thought === 'string' ? thought : '';
}
