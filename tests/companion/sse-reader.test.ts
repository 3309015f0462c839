import { describe, expect, it } from 'vitest';
import { readEvents } from '../../companion/src/sse-reader.js';

async function all(chunks: string[]) {
  const events = [];
  for await (const event of readEvents(
    (async function* () {
      for (const chunk of chunks) yield Buffer.from(chunk);
    })(),
  ))
    events.push(event);
  return events;
}

describe('readEvents', () => {
  it('reads named events split across chunks, ignoring comments and ids', async () => {
    expect(await all(['event: run.created\nid: 1\ndata: {"a"', ':1}\n\n: keep-alive\n\nevent: message.delta\r\ndata: x\r\n', 'data: y\r\n\r\n'])).toEqual([
      { event: 'run.created', data: '{"a":1}' },
      { event: 'message.delta', data: 'x\ny' },
    ]);
  });

  it('yields a last event that ends without a blank line', async () => {
    expect(await all(['data: tail'])).toEqual([{ event: 'message', data: 'tail' }]);
  });
});

describe('readEvents on a fetch body', () => {
  it('reads a web ReadableStream (a provider answer) and nothing from a null body', async () => {
    const response = new Response('data: {"choices":[]}\r\n\r\ndata: [DONE]\r\n\r\n', { headers: { 'content-type': 'text/event-stream' } });
    const events = [];
    for await (const event of readEvents(response.body)) events.push(event);
    expect(events).toEqual([
      { event: 'message', data: '{"choices":[]}' },
      { event: 'message', data: '[DONE]' },
    ]);
    const none = [];
    for await (const event of readEvents(null)) none.push(event);
    expect(none).toEqual([]);
  });
});
