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
 */
export async function* readEvents(body: EventBody | null): AsyncGenerator<ServerSentEvent> {
  if (!body) return;
  const decoder = new TextDecoder();
  let buffer = '';
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
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    const lines = buffer.split('\n');
    buffer = lines.pop() ?? '';
    for (const line of lines) {
      const complete = take(line.endsWith('\r') ? line.slice(0, -1) : line);
      if (complete) yield complete;
    }
  }
  buffer += decoder.decode();
  const last = take(buffer) ?? take('');
  if (last) yield last;
}
