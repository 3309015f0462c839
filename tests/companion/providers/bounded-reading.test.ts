import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HearthError } from '../../../companion/src/errors.js';
import { readChatAnswer } from '../../../companion/src/providers/chat-stream.js';
import { ProviderClient, upstreamError, type ResolveSecret } from '../../../companion/src/providers/client.js';
import { LineBuffer, LineTooLong } from '../../../companion/src/line-buffer.js';
import { readEvents } from '../../../companion/src/sse-reader.js';
import { closeServer } from '../../helpers/http-server.js';
import { sseData } from '../../helpers/streams.js';

/*
 * A provider cannot make Hearth hold its whole answer (issue 31, item 6): JSON answers are read up
 * to a limit (64 MiB), error bodies up to 64 KB, and the rest is cancelled, not read; an event
 * stream is scanned for line ends in the new bytes only, and a line that passes 32 MiB without
 * ending fails the stream with provider_interrupted. The bodies here are made as they are read,
 * so what Hearth took of them is counted.
 */

const MIB = 1024 * 1024;
const resolveSecret: ResolveSecret = () => undefined;

/** A body of `total` bytes of `fill` made one `chunk` at a time as it is read, counting what was read and whether it was cancelled. */
function countedBody(total: number, fill: string, chunk = MIB, start = '') {
  const piece = new TextEncoder().encode(fill.repeat(Math.ceil(chunk / fill.length)).slice(0, chunk));
  const seen = { pulled: 0, cancelled: false };
  let first = true;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (first && start) {
        first = false;
        controller.enqueue(new TextEncoder().encode(start));
        return;
      }
      if (seen.pulled >= total) return controller.close();
      seen.pulled += piece.length;
      controller.enqueue(piece);
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { body, seen };
}

const answering = (response: () => Response) => (async () => response()) as unknown as typeof fetch;

describe('JSON answers', () => {
  it('a model list past 64 MiB is refused and the rest of it is never read', async () => {
    const { body, seen } = countedBody(100 * MIB, ' ', MIB, '{"data":[');
    const client = new ProviderClient(
      [{ name: 'big', base_url: 'http://big.example/v1' }],
      resolveSecret,
      answering(() => new Response(body, { headers: { 'content-type': 'application/json' } })),
    );
    expect(await client.listModels()).toEqual([]);
    expect(client.status()[0]!.error).toBe('Provider "big" answered with more than 64 MiB; Hearth reads at most that much of an answer.');
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThanOrEqual(65 * MIB);
  });
});

describe('error answers', () => {
  it('are read up to 64 KB and the rest cancelled, by upstreamError', async () => {
    const { body, seen } = countedBody(50 * MIB, 'e', 16 * 1024, '{"error":{"message":"too much ');
    const error = await upstreamError(new Response(body, { status: 500 }), 'loud');
    expect(error).toBeInstanceOf(HearthError);
    expect(error.message).toMatch(/^Provider "loud" answered 500: /);
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThanOrEqual(64 * 1024 + 16 * 1024);
  });

  describe('relayed from an endpoint that sends a huge error body', () => {
    let url = '';
    const closedEarly: boolean[] = [];
    const server = createServer((request, response: ServerResponse) => {
      request.resume();
      response.writeHead(400, { 'content-type': 'application/json' });
      let written = 0;
      const piece = Buffer.alloc(64 * 1024, 'x');
      response.on('close', () => closedEarly.push(!response.writableFinished));
      const write = (): void => {
        while (written < 32 * MIB) {
          written += piece.length;
          if (!response.write(piece)) return void response.once('drain', write);
        }
        response.end();
      };
      response.write('{"error":{"message":"');
      write();
    });
    beforeAll(async () => {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    });
    afterAll(() => closeServer(server));

    it('passes on at most 64 KB of it and closes the connection instead of reading 32 MiB', async () => {
      const client = new ProviderClient([{ name: 'loud', base_url: url }], resolveSecret);
      const response = await client.forward('/chat/completions', 'loud/m', { messages: [] }, new AbortController().signal);
      expect(response.status).toBe(400);
      expect((await response.text()).length).toBeLessThanOrEqual(64 * 1024);
      await expect.poll(() => closedEarly).toEqual([true]);
    });
  });
});

describe('event streams', () => {
  it('a relayed stream whose line passes 32 MiB ends with provider_interrupted, and no more of it is read', async () => {
    const { body, seen } = countedBody(48 * MIB, 'a', MIB, 'data: ');
    const stream = () => new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    const client = new ProviderClient([{ name: 'endless', base_url: 'http://endless.example/v1' }], resolveSecret, answering(stream));
    const response = await client.forward('/chat/completions', 'endless/m', { stream: true, messages: [] }, new AbortController().signal);
    const text = await response.text();
    expect(text.length).toBeLessThan(4096);
    expect(sseData(text).at(-1)).toMatchObject({ error: { code: 'provider_interrupted', message: expect.stringContaining('32 MiB') } });
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThanOrEqual(33 * MIB);
  });

  it("a provider's chat stream without line ends fails with provider_interrupted (an agent's turn)", async () => {
    const { body, seen } = countedBody(48 * MIB, 'b', MIB, 'data: ');
    const response = new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    await expect(readChatAnswer(response, () => undefined, 'endless')).rejects.toMatchObject({ code: 'provider_interrupted' });
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThanOrEqual(33 * MIB);
  });

  it('readEvents takes a line of any length up to the limit, in pieces', async () => {
    const { body } = countedBody(4 * MIB, 'c', 1024, 'data: ');
    const ended = new ReadableStream<Uint8Array>({
      async start(controller) {
        for await (const piece of body as unknown as AsyncIterable<Uint8Array>) controller.enqueue(piece);
        controller.enqueue(new TextEncoder().encode('\n\n'));
        controller.close();
      },
    });
    const events: string[] = [];
    for await (const event of readEvents(ended)) events.push(event.data);
    expect(events).toHaveLength(1);
    expect(events[0]!.length).toBe(4 * MIB);
  });

  it('a line held in pieces is searched for its end once per byte, not once per piece', () => {
    const lines = new LineBuffer(8 * MIB);
    const piece = new TextEncoder().encode('d'.repeat(1024));
    for (let index = 0; index < 4096; index++) expect(lines.push(piece)).toBeUndefined();
    const complete = lines.push(new TextEncoder().encode('\nrest'));
    expect(complete!.length).toBe(4 * MIB + 1);
    expect(lines.scanned).toBe(4 * MIB + 5);
    expect(() => {
      for (let index = 0; index < 8 * 1024; index++) lines.push(piece);
    }).toThrow(LineTooLong);
  });
});
