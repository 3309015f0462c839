import { describe, expect, it } from 'vitest';
import { readEvents } from '../../../companion/src/channel/device/sse-reader.js';

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
