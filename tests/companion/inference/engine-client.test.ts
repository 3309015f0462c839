/**
 * The llama-server client against a stand-in server on a Unix socket: text split mid-character
 * between two reads arrives whole, and a connection error does not name the socket's path.
 */
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineConnectionError, EngineHttpError, ServerClient } from '../../../companion/src/inference/server/client.js';
import { tempFolder } from '../../helpers/temp.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** Answers every request with `pieces`, each written (and flushed) on its own. */
async function standIn(pieces: Buffer[], contentType: string): Promise<string> {
  const path = join(tempFolder('engine-client'), 'engine.sock');
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': contentType });
    const next = (index: number) => {
      if (index === pieces.length) return response.end();
      response.write(pieces[index], () => setImmediate(() => next(index + 1)));
    };
    next(0);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return path;
}

/** `text` as bytes, cut after the first byte of each multi-byte character. */
function cutMidCharacter(text: string): Buffer[] {
  const bytes = Buffer.from(text);
  const cuts = [0];
  for (let index = 0; index < bytes.length; index++) if (bytes[index]! >= 0xc0) cuts.push(index + 1);
  cuts.push(bytes.length);
  return cuts.slice(1).map((end, index) => bytes.subarray(cuts[index], end));
}

const words = 'Ünïcödé — 你好 😀 fin';

describe('the llama-server client', () => {
  it('decodes a stream whose characters are split between reads', async () => {
    const body = `data: ${JSON.stringify({ content: words })}\n\ndata: ${JSON.stringify({ content: '✓' })}\n\n`;
    const path = await standIn(cutMidCharacter(body), 'text/event-stream');
    const client = new ServerClient(() => path, 'key');
    const contents: string[] = [];
    for await (const event of client.events<{ content: string }>('/completion', {})) contents.push(event.content);
    expect(contents).toEqual([words, '✓']);
  });

  it('reads events cut anywhere, one byte a read, and skips comments and other fields', async () => {
    const body = `: ping\n\nevent: message\ndata: ${JSON.stringify({ content: 'a' })}\n\nid: 2\ndata: ${JSON.stringify({ content: 'b' })}\n\n`;
    const path = await standIn(
      [...Buffer.from(body)].map((byte) => Buffer.from([byte])),
      'text/event-stream',
    );
    const contents: string[] = [];
    for await (const event of new ServerClient(() => path, 'key').events<{ content: string }>('/completion', {})) contents.push(event.content);
    expect(contents).toEqual(['a', 'b']);
  });

  it('says the connection closed early when the stream ends inside an event, not that the JSON is bad', async () => {
    const path = join(tempFolder('engine-client'), 'engine.sock');
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(`data: ${JSON.stringify({ content: 'a' })}\n\ndata: {"content":"b`, () => response.socket?.destroy());
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(path, resolve));
    const contents: string[] = [];
    const failed = await (async () => {
      for await (const event of new ServerClient(() => path, 'key').events<{ content: string }>('/completion', {})) contents.push(event.content);
    })().catch((error: unknown) => error);
    expect(contents).toEqual(['a']);
    expect(failed).toBeInstanceOf(EngineConnectionError);
  });

  it("throws an error event as the engine's error", async () => {
    const body = `data: ${JSON.stringify({ error: { code: 400, message: 'the prompt is too long' } })}\n\n`;
    const path = await standIn([Buffer.from(body)], 'text/event-stream');
    const failed = await (async () => {
      for await (const _event of new ServerClient(() => path, 'key').events('/completion', {}));
    })().catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(EngineHttpError);
    expect(failed).toMatchObject({ status: 400, message: 'the prompt is too long' });
  });

  it('decodes a JSON answer whose characters are split between reads', async () => {
    const path = await standIn(cutMidCharacter(JSON.stringify({ content: words })), 'application/json');
    const client = new ServerClient(() => path, 'key');
    expect(await client.json<{ content: string }>('GET', '/props')).toEqual({ content: words });
  });

  it("says the engine did not answer without naming the socket's path", async () => {
    const path = join(tempFolder('engine-client'), 'secret-folder', 'gone.sock');
    const failed = await new ServerClient(() => path, 'key').json('GET', '/health').catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(EngineConnectionError);
    expect((failed as Error).message).toMatch(/did not answer/);
    expect((failed as Error).message).not.toContain('secret-folder');
  });
});
