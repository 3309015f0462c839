import { redact } from '../redaction.js';
import { HearthError } from '../errors.js';
import { isObject, parseJson } from '../json.js';
import { EventLines, fieldOf, type CompleteLines } from '../sse-reader.js';
import { readErrorText } from './read-body.js';
import type { LineHook } from './relay.js';

/**
 * Helpers for relaying an OpenAI-compatible provider's answers: the model id the
 * provider reports is rewritten back to Hearth's `<provider>/<model>` id, and an
 * upstream error answer becomes a HearthError whose message never carries a secret.
 */

type Json = Record<string, unknown>;

/**
 * Rewrites the model id in one OpenAI-shaped JSON value: the top-level `model`
 * (chat completions, chunks, embeddings, responses) and `response.model` (the
 * Responses protocol's stream events). Other values are returned as they are; the
 * input is not mutated.
 */
export function rewriteModelJson<T>(json: T, hearthId: string): T {
  if (!isObject(json)) return json;
  let out: Json = json;
  if (typeof json.model === 'string' && json.model !== hearthId) out = { ...json, model: hearthId };
  const response = json.response;
  if (isObject(response) && typeof response.model === 'string' && response.model !== hearthId) {
    out = { ...out, response: { ...response, model: hearthId } };
  }
  return out as T;
}

/** One SSE line (without its `\n`): a `data:` line holding JSON with a model gets it rewritten, keeping the line's own form. */
function rewriteLine(line: string, hearthId: string): string {
  if (!line.includes('"model"')) return line;
  const { field, value } = fieldOf(line);
  const payload = value.trim();
  if (field !== 'data' || payload === '[DONE]' || !payload.startsWith('{')) return line;
  const parsed = parseJson(payload);
  if (parsed === undefined) return line;
  const rewritten = rewriteModelJson(parsed, hearthId);
  if (rewritten === parsed) return line;
  const space = line.startsWith('data: ') ? ' ' : '';
  const cr = line.endsWith('\r') ? '\r' : '';
  return `data:${space}${JSON.stringify(rewritten)}${cr}`;
}

/**
 * The relay's hook (relay.ts) that rewrites `"model"` in every `data:` JSON line of an event
 * stream to Hearth's id; `[DONE]`, comments, other fields and non-JSON lines pass unchanged.
 */
export function modelRewrite(hearthId: string): LineHook {
  return { rewrites: true, line: (line) => rewriteLine(line, hearthId) };
}

/**
 * The model rewrite over an SSE byte stream of its own, cut into lines by the one reader
 * (sse-reader.ts: only an unfinished line is held back, so events are not delayed; a line past
 * MAX_LINE_BYTES errors the stream with LineTooLong). Cancelling the returned stream cancels
 * `body` (which closes the upstream connection of a fetch body).
 */
export function rewriteModelStream(body: ReadableStream<Uint8Array>, hearthId: string): ReadableStream<Uint8Array> {
  const lines = new EventLines();
  const encoder = new TextEncoder();
  const rewritten = (complete: CompleteLines) => complete.lines.map((line) => rewriteLine(line, hearthId)).join('\n');
  const transform = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      const complete = lines.push(chunk);
      if (complete) controller.enqueue(encoder.encode(`${rewritten(complete)}\n`));
    },
    flush(controller) {
      const rest = lines.end();
      if (rest) controller.enqueue(encoder.encode(rewritten(rest)));
    },
  });
  return body.pipeThrough(transform);
}

export { redact };

const MAX_DETAIL = 500;
/** A provider's `type` or `code` is passed on only when it is a plain word like `context_length_exceeded`. */
const PLAIN_WORD = /^[a-z]+(_[a-z]+)*$/;

/** What an error answer's body says: its `error.message` (or the like), or its text, on one line and at most MAX_DETAIL characters. */
function upstreamDetail(text: string): string {
  let detail = text.trim();
  const parsed = parseJson(text);
  if (isObject(parsed)) {
    const error = parsed.error;
    if (isObject(error) && typeof error.message === 'string') detail = error.message;
    else if (typeof error === 'string') detail = error;
    else if (typeof parsed.message === 'string') detail = parsed.message;
    else if (typeof parsed.detail === 'string') detail = parsed.detail;
  }
  // Otherwise not JSON: keep the text itself (an HTML error page, a proxy's message).
  detail = detail.replace(/\s+/g, ' ');
  return detail.length > MAX_DETAIL ? `${detail.slice(0, MAX_DETAIL)}…` : detail;
}

/**
 * Reads an upstream error answer (OpenAI's `{"error":{"message"}}` shape or any
 * text, its first 64 KB: the rest is cancelled) into HearthError('provider_error').
 * `secrets` (the provider's key and secret header values) are removed from the message.
 */
export async function upstreamError(response: Response, provider: string, secrets: readonly string[] = []): Promise<HearthError> {
  const detail = upstreamDetail(await readErrorText(response));
  const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  const message = `Provider "${provider}" answered ${status}${detail ? `: ${detail}` : ''}`;
  return new HearthError('provider_error', redact(message, secrets));
}

/**
 * The body Hearth passes on for a provider's error answer: its message, redacted, in OpenAI's
 * error shape, and nothing else of what the provider sent (a provider that echoes the request
 * would show its key, encoded in ways no redaction can foresee, in any other field). The
 * provider's `type` and `code` stay when they are plain words, so clients still tell a
 * context_length_exceeded from a model_not_found.
 */
export function relayedErrorBody(text: string, status: number, secrets: readonly string[]): { error: Record<string, string | null> } {
  const parsed = parseJson(text);
  const error = isObject(parsed) && isObject(parsed.error) ? parsed.error : {};
  const plain = (value: unknown): string | undefined =>
    typeof value === 'string' && value.length <= 64 && PLAIN_WORD.test(value) && redact(value, secrets) === value ? value : undefined;
  const detail = upstreamDetail(text);
  return {
    error: {
      message: detail ? redact(detail, secrets) : `The provider answered ${status}.`,
      type: plain(error.type) ?? (status >= 500 ? 'server_error' : 'invalid_request_error'),
      param: null,
      code: plain(error.code) ?? null,
    },
  };
}

/**
 * An endpoint's error answer passed on as its status (with its Retry-After) and its redacted
 * message, read from the first 64 KB of its body (the rest is cancelled).
 */
export async function relayedError(response: Response, secrets: readonly string[]): Promise<Response> {
  const body = relayedErrorBody(await readErrorText(response), response.status, secrets);
  const headers = new Headers({ 'content-type': 'application/json' });
  const retryAfter = response.headers.get('retry-after');
  if (retryAfter !== null && /^[\w ,:-]{1,64}$/.test(retryAfter)) headers.set('retry-after', retryAfter);
  return new Response(JSON.stringify(body), { status: response.status, statusText: response.statusText, headers });
}
