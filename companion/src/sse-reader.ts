import { LineBuffer, MAX_LINE_BYTES } from './line-buffer.js';

/**
 * The one reader of server-sent events. `EventLines` cuts a byte stream into complete lines
 * (line-buffer.ts: each byte searched once, a line past the limit throws LineTooLong) and decodes
 * them once; `fieldOf` reads a line's field and value. On them: `readEvents` (whole events: a
 * paired host's run events, a provider's chat chunks for an agent, llama-server's generation
 * events) and the relay of a provider's stream to a client (providers/relay.ts: lines passed on as
 * they complete, read by its hooks).
 */

/** One server-sent event: its `event:` name (default "message") and its `data:` lines joined. */
export interface ServerSentEvent {
  event: string;
  data: string;
}

/** Complete lines of an event stream: their bytes as they came, and their text, one string a line (a `\r` before the line end kept). */
export interface CompleteLines {
  bytes: Uint8Array;
  lines: string[];
}

/** Cuts an event stream's bytes into complete lines, scanning and decoding each byte once. */
export class EventLines {
  private readonly buffer: LineBuffer;
  private readonly decoder = new TextDecoder();

  constructor(limit = MAX_LINE_BYTES) {
    this.buffer = new LineBuffer(limit);
  }

  /** Bytes searched for a line end so far: each byte received at most once. */
  get scanned(): number {
    return this.buffer.scanned;
  }

  /** The lines the chunk completes, or undefined when it completes none. Throws LineTooLong (line-buffer.ts). */
  push(chunk: Uint8Array): CompleteLines | undefined {
    const bytes = this.buffer.push(chunk);
    if (!bytes) return undefined;
    // `bytes` ends with a line end, so the decoder holds nothing back and the last piece is empty.
    const lines = this.decoder.decode(bytes, { stream: true }).split('\n');
    lines.pop();
    return { bytes, lines };
  }

  /** At the end of the stream: a last line that was not ended, or undefined when there is none. */
  end(): CompleteLines | undefined {
    const bytes = this.buffer.rest();
    const text = this.decoder.decode(bytes);
    return bytes.length > 0 || text ? { bytes, lines: [text] } : undefined;
  }
}

/** A line's field and value (`data: x` -> data, x; one space after the colon dropped; a trailing `\r` dropped); a comment's field is ''. */
export function fieldOf(line: string): { field: string; value: string } {
  const clean = line.endsWith('\r') ? line.slice(0, -1) : line;
  const colon = clean.indexOf(':');
  if (colon < 0) return { field: clean, value: '' };
  const value = clean.slice(colon + 1);
  return { field: clean.slice(0, colon), value: value.startsWith(' ') ? value.slice(1) : value };
}

/** A byte stream: a Node response, or a fetch response's body. */
type EventBody = AsyncIterable<Buffer | Uint8Array | string> | ReadableStream<Uint8Array>;

/**
 * Reads server-sent events from a byte stream (a response body; none from a body that is null):
 * blocks separated by a blank line, `event:` and `data:` fields, comments (`:`) and other fields
 * ignored. A line longer than `lineLimit` bytes ends the reading with LineTooLong
 * (line-buffer.ts); the caller's loop ending cancels the body.
 */
export async function* readEvents(body: EventBody | null, lineLimit = MAX_LINE_BYTES): AsyncGenerator<ServerSentEvent> {
  if (!body) return;
  const lines = new EventLines(lineLimit);
  let event = 'message';
  let data: string[] = [];
  const take = (line: string): ServerSentEvent | undefined => {
    if (line === '' || line === '\r') {
      const complete = data.length > 0 ? { event, data: data.join('\n') } : undefined;
      event = 'message';
      data = [];
      return complete;
    }
    const { field, value } = fieldOf(line);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    return undefined;
  };
  // A fetch body (web ReadableStream) is async-iterable in Node, though the DOM types do not say so.
  for await (const chunk of body as AsyncIterable<Buffer | Uint8Array | string>) {
    const complete = lines.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    for (const line of complete?.lines ?? []) {
      const ready = take(line);
      if (ready) yield ready;
    }
  }
  const last = take(lines.end()?.lines[0] ?? '') ?? take('');
  if (last) yield last;
}
