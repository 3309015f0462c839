import { type HearthError } from '../errors.js';
import { isObject, parseJson } from '../json.js';
import { MAX_LINE_BYTES } from '../line-buffer.js';
import { EventLines, fieldOf, type CompleteLines } from '../sse-reader.js';

/**
 * A provider's successful answer on its way to the client, watched: when its body ends (or breaks,
 * or the client leaves) the endpoint's hold is released; the response id (a Responses chain
 * continues on the endpoint that stored it) and the token usage are read from it; and a body that
 * breaks after it began ends a stream with one clear error event in the protocol's shape instead
 * of a cut-off line. An event stream is cut into lines once (sse-reader.ts `EventLines`): the
 * relay's own tap and the hooks its caller adds (the model rewrite, the text capture of
 * routes/openai/forward.ts) read each complete line as it passes. Bytes pass through unchanged
 * unless a hook rewrites lines.
 */

export type RelayOutcome = 'completed' | 'cancelled' | 'broken';

export interface RelayTap {
  responseId?: string;
  promptTokens?: number;
  completionTokens?: number;
}

/** Reads, and may rewrite, each line of a relayed event stream (JSON answers pass no hook). */
export interface LineHook {
  /** The hook changes lines: the relay then sends the lines' text re-encoded, not the bytes that came. */
  rewrites?: boolean;
  /** A line without its line end (a `\r` before it kept); returns the line to pass on. */
  line(line: string): string;
  /** The stream ended and was passed on whole, or ended with its error event; never when the client went away. */
  end?(): void;
}

export interface RelayOptions {
  /** `/responses` streams end with the Responses protocol's `error` event; others with a chat-style `data: {"error":…}`. */
  responses: boolean;
  /** The error a break becomes (provider_interrupted with the reason in words). */
  interrupted(reason: unknown): HearthError;
  /** Whether the client went away (then a break is its doing, not the endpoint's). */
  clientGone(): boolean;
  onFirstChunk?(): void;
  onSettle(outcome: RelayOutcome, tap: RelayTap): void;
  /** The longest line an event stream may send (default MAX_LINE_BYTES); a longer one breaks it with LineTooLong. */
  lineLimit?: number;
  /** Hooks on the lines of an event stream, after the relay's own tap, in order. */
  hooks?: LineHook[];
}

/** JSON bodies are read for their id and usage up to this size; larger ones pass through unread. */
const JSON_TAP_LIMIT = 4 * 1024 * 1024;

export function relayResponse(response: Response, options: RelayOptions): Response {
  const upstream = response.body;
  if (!upstream) {
    options.onSettle('completed', {});
    return response;
  }
  const events = (response.headers.get('content-type') ?? '').includes('text/event-stream');
  const tap = events ? new EventTap() : new JsonTap();
  const hooks: LineHook[] = tap instanceof EventTap ? [tap, ...(options.hooks ?? [])] : [];
  const rewrites = hooks.some((hook) => hook.rewrites);
  const encoder = new TextEncoder();
  const reader = upstream.getReader();
  let settled = false;
  let first = true;
  /** SSE lines not finished yet: held back so that a break never leaves half a line before the error event. */
  const lines = new EventLines(options.lineLimit ?? MAX_LINE_BYTES);
  /** The last two bytes sent, to know whether the error event starts on an event boundary. */
  let tail = '\n\n';
  const settle = (outcome: RelayOutcome) => {
    if (settled) return;
    settled = true;
    options.onSettle(outcome, tap.result());
    if (outcome !== 'cancelled') for (const hook of hooks) hook.end?.();
  };
  /** Complete lines through the hooks, then on to the client. */
  const pass = (controller: ReadableStreamDefaultController<Uint8Array>, complete: CompleteLines, ended: boolean): void => {
    const text = complete.lines.map((line) => hooks.reduce((current, hook) => hook.line(current), line));
    const bytes = rewrites ? encoder.encode(ended ? text.join('\n') : `${text.join('\n')}\n`) : complete.bytes;
    if (bytes.length === 0) return;
    tail = (tail + new TextDecoder().decode(bytes.subarray(Math.max(0, bytes.length - 2)))).slice(-2);
    controller.enqueue(bytes);
  };
  const body = new ReadableStream<Uint8Array>({
    // A pull that enqueues nothing is not called again: read until something is passed on or the body ends.
    async pull(controller) {
      while (!(await step(controller)));
    },
    async cancel(reason) {
      settle('cancelled');
      await reader.cancel(reason).catch(() => undefined);
    },
  });
  /** The body broke (or sent a line past the limit): a stream ends with one error event, a JSON body errors. */
  function broken(controller: ReadableStreamDefaultController<Uint8Array>, error: unknown): true {
    if (options.clientGone()) {
      settle('cancelled');
      controller.error(error);
      return true;
    }
    settle('broken');
    const failure = options.interrupted(error);
    if (!events) {
      controller.error(failure);
      return true;
    }
    const boundary = tail.endsWith('\n\n') ? '' : tail.endsWith('\n') ? '\n' : '\n\n';
    controller.enqueue(encoder.encode(boundary + errorEvent(failure, options.responses, tap.result())));
    controller.close();
    return true;
  }
  /** Reads one upstream chunk; true once something was passed on (or the body ended or broke). */
  async function step(controller: ReadableStreamDefaultController<Uint8Array>): Promise<boolean> {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch (error) {
      return broken(controller, error);
    }
    if (chunk.done) {
      const rest = events ? lines.end() : undefined;
      if (rest) pass(controller, rest, true);
      settle('completed');
      controller.close();
      return true;
    }
    if (first) {
      first = false;
      options.onFirstChunk?.();
    }
    const bytes = chunk.value;
    if (tap instanceof JsonTap) {
      tap.add(bytes);
      controller.enqueue(bytes);
      return true;
    }
    let complete: CompleteLines | undefined;
    try {
      complete = lines.push(bytes);
    } catch (error) {
      // A line past the limit: the rest of the body is not read.
      await reader.cancel(error).catch(() => undefined);
      return broken(controller, error);
    }
    if (!complete) return false;
    pass(controller, complete, false);
    return true;
  }
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

function errorEvent(failure: HearthError, responses: boolean, tap: RelayTap & { nextSequence?: number }): string {
  const { error } = failure.toBody();
  if (!responses) return `data: ${JSON.stringify({ error })}\n\n`;
  const event = { type: 'error', code: error.code, message: error.message, param: error.param, sequence_number: tap.nextSequence ?? 0 };
  return `event: error\ndata: ${JSON.stringify(event)}\n\n`;
}

function readUsage(usage: unknown, into: RelayTap): void {
  if (!isObject(usage)) return;
  const prompt = usage.prompt_tokens ?? usage.input_tokens;
  const completion = usage.completion_tokens ?? usage.output_tokens;
  if (typeof prompt === 'number') into.promptTokens = prompt;
  if (typeof completion === 'number') into.completionTokens = completion;
}

/** Reads the `data:` lines that carry usage, a Responses id or a sequence number; other lines are not parsed. */
class EventTap implements LineHook {
  private readonly found: RelayTap & { nextSequence?: number } = {};

  line(line: string): string {
    const { field, value } = fieldOf(line);
    if (field !== 'data') return line;
    const sequence = /"sequence_number":\s*(\d+)/.exec(value);
    if (sequence) this.found.nextSequence = Number(sequence[1]) + 1;
    if (!value.includes('"usage":{') && !value.includes('"response.created"') && !value.includes('"usage": {')) return line;
    const json = parseJson(value.trim());
    if (!isObject(json)) return line;
    readUsage(json.usage, this.found);
    const response = json.response;
    if (isObject(response)) {
      if (json.type === 'response.created' && typeof response.id === 'string') this.found.responseId = response.id;
      readUsage(response.usage, this.found);
    }
    return line;
  }

  result() {
    return this.found;
  }
}

/** Keeps a JSON body (up to JSON_TAP_LIMIT) to read its id and usage once it is complete. */
class JsonTap {
  private readonly pieces: Uint8Array[] = [];
  private size = 0;

  add(bytes: Uint8Array): void {
    this.size += bytes.length;
    if (this.size <= JSON_TAP_LIMIT) this.pieces.push(bytes);
  }

  result(): RelayTap {
    if (this.size > JSON_TAP_LIMIT || this.pieces.length === 0) return {};
    const found: RelayTap = {};
    try {
      const json: unknown = JSON.parse(Buffer.concat(this.pieces).toString('utf8'));
      if (!isObject(json)) return found;
      if (json.object === 'response' && typeof json.id === 'string') found.responseId = json.id;
      readUsage(json.usage, found);
    } catch {
      // not JSON: nothing to read
    }
    return found;
  }
}
