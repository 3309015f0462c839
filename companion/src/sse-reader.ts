import { LineBuffer, MAX_LINE_BYTES } from './line-buffer.js';

/** One server-sent event: its `event:` name (default "message") and its `data:` lines joined. */
export interface ServerSentEvent {
  event: string;
  data: string;
}

/** A byte stream: a Node response, or a fetch response's body. */
type EventBody = AsyncIterable<Buffer | Uint8Array | string> | ReadableStream<Uint8Array>;

/**
 * Reads server-sent events from a byte stream (a response body; none from a body that is null):
 * blocks separated by a blank line, `event:` and `data:` fields, comments (`:`) and other fields
 * ignored. The one reader of event streams: a paired host's run events, a provider's chat chunks.
 * A line longer than `lineLimit` bytes ends the reading with LineTooLong (line-buffer.ts); the
 * caller's loop ending cancels the body.
 */
export async function* readEvents(body: EventBody | null, lineLimit = MAX_LINE_BYTES): AsyncGenerator<ServerSentEvent> {
  if (!body) return;
  const decoder = new TextDecoder();
  const lines = new LineBuffer(lineLimit);
  let event = 'message';
  let data: string[] = [];
  const take = (line: string): ServerSentEvent | undefined => {
    if (line === '') {
      const complete = data.length > 0 ? { event, data: data.join('\n') } : undefined;
      event = 'message';
      data = [];
      return complete;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    return undefined;
  };
  // A fetch body (web ReadableStream) is async-iterable in Node, though the DOM types do not say so.
  for await (const chunk of body as AsyncIterable<Buffer | Uint8Array | string>) {
    const complete = lines.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    if (!complete) continue;
    // `complete` ends with a line end, so the decoder holds nothing back and the last piece is empty.
    const text = decoder.decode(complete, { stream: true }).split('\n');
    text.pop();
    for (const line of text) {
      const ready = take(line.endsWith('\r') ? line.slice(0, -1) : line);
      if (ready) yield ready;
    }
  }
  const rest = decoder.decode(lines.rest());
  const last = take(rest.endsWith('\r') ? rest.slice(0, -1) : rest) ?? take('');
  if (last) yield last;
}
