import type { ErrorBody, ErrorCode } from '$shared/api/errors';
import type {
  ChatCompletionChunk,
  ChatMessage,
  FinishReason,
  HealthStatus,
  ModelList,
  ModelRecord,
  Usage,
} from '$shared/api/openai';

/** Failures found by the client itself rather than reported by the companion. */
export type ClientErrorCode = 'unreachable' | 'invalid_response' | 'stream_interrupted';

/** The one error this module throws, apart from the abort reason of a cancelled call. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode | ClientErrorCode,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

function isErrorBody(value: unknown): value is ErrorBody {
  const error = (value as Partial<ErrorBody> | null)?.error;
  return typeof error === 'object' && error !== null && typeof error.message === 'string';
}

function fromErrorBody(status: number, body: ErrorBody): ApiError {
  return new ApiError(status, body.error.code, body.error.message, body.error.param ?? null);
}

async function errorFrom(response: Response): Promise<ApiError> {
  const text = await response.text();
  try {
    const body: unknown = JSON.parse(text);
    if (isErrorBody(body)) return fromErrorBody(response.status, body);
  } catch {
    // Not JSON: described by the status line below.
  }
  return new ApiError(response.status, 'invalid_response', `HTTP ${response.status} ${response.statusText}`.trim());
}

/** Sends one request to the companion; resolves only for a 2xx response. */
async function send(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (!headers.has('accept')) headers.set('accept', 'application/json');
  if (init.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  let response: Response;
  try {
    response = await fetch(path, { ...init, headers });
  } catch (error) {
    if (init.signal?.aborted) throw init.signal.reason;
    throw new ApiError(0, 'unreachable', `The companion could not be reached: ${(error as Error).message}`);
  }
  if (!response.ok) throw await errorFrom(response);
  return response;
}

/** A JSON request to the companion. */
export async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await send(path, init);
  try {
    return (await response.json()) as T;
  } catch {
    throw new ApiError(response.status, 'invalid_response', `The companion sent a reply that is not JSON (${path}).`);
  }
}

export async function listModels(): Promise<ModelRecord[]> {
  return (await request<ModelList>('/v1/models')).data;
}

export function health(): Promise<HealthStatus> {
  return request<HealthStatus>('/health');
}

/** Lines of a byte stream; cancelling the signal cancels the stream. */
async function* lines(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<string> {
  const reader = body.getReader();
  const cancel = () => void reader.cancel(signal?.reason).catch(() => undefined);
  signal?.addEventListener('abort', cancel, { once: true });
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      signal?.throwIfAborted();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const complete = buffer.split('\n');
      buffer = complete.pop() ?? '';
      for (const line of complete) yield line.endsWith('\r') ? line.slice(0, -1) : line;
    }
    buffer += decoder.decode();
    if (buffer) yield buffer;
  } finally {
    signal?.removeEventListener('abort', cancel);
    await reader.cancel().catch(() => undefined);
  }
}

/** The data of each server-sent event (`data:` lines joined, other fields ignored). */
async function* events(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<string> {
  let data: string[] = [];
  for await (const line of lines(body, signal)) {
    if (line === '') {
      if (data.length > 0) yield data.join('\n');
      data = [];
    } else if (line.startsWith('data:')) {
      data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    }
  }
  if (data.length > 0) yield data.join('\n');
}

export interface StreamChatOptions {
  model: string;
  messages: ChatMessage[];
  signal?: AbortSignal;
  onDelta?: (text: string) => void;
}

export interface ChatResult {
  text: string;
  usage: Usage | null;
  finishReason: FinishReason | null;
}

/** Streams one chat completion; rejects with the abort reason when `signal` is aborted. */
export async function streamChat({ model, messages, signal, onDelta }: StreamChatOptions): Promise<ChatResult> {
  const response = await send('/v1/chat/completions', {
    method: 'POST',
    headers: { accept: 'text/event-stream' },
    body: JSON.stringify({ model, messages, stream: true, stream_options: { include_usage: true } }),
    signal,
  });
  if (!response.body) throw new ApiError(response.status, 'invalid_response', 'The companion sent an empty stream.');
  const result: ChatResult = { text: '', usage: null, finishReason: null };
  for await (const data of events(response.body, signal)) {
    if (data === '[DONE]') return result;
    let chunk: ChatCompletionChunk | ErrorBody;
    try {
      chunk = JSON.parse(data);
    } catch {
      throw new ApiError(response.status, 'invalid_response', `The companion sent an event that is not JSON: ${data.slice(0, 80)}`);
    }
    if (isErrorBody(chunk)) throw fromErrorBody(response.status, chunk);
    const choice = chunk.choices[0];
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
