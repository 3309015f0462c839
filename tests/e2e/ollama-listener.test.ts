import { copyFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerStatus } from '#shared/api/admin.js';
import { tinyEmbeddingModelPath } from '../helpers/models.js';
import { keyRequiredDataDir, newDataDir, send, startServer, type RunningServer } from '../helpers/server.js';

/*
 * The listener for apps that expect Ollama (server.ollama): the same /api routes on 127.0.0.1 at
 * its own port (0 here: a free one; 11434 may be taken on the machine that runs the tests), and
 * refused, with the companion running on, when its port is taken.
 */

async function status(server: RunningServer): Promise<ServerStatus> {
  return (await (await fetch(`${server.url}/admin/status`)).json()) as ServerStatus;
}

describe('the Ollama listener, on', () => {
  let server: RunningServer;
  let url: string;
  let ollama: Ollama;

  beforeAll(async () => {
    const dataDir = await newDataDir(true);
    copyFileSync(await tinyEmbeddingModelPath(), join(dataDir, 'models', 'tiny-embed.gguf'));
    writeFileSync(
      join(dataDir, 'config.yaml'),
      ['version: 1', 'server:', '  ollama:', '    enabled: true', '    port: 0', 'models:', '  threads: 1', '  context_size: 512', ''].join('\n'),
    );
    server = await startServer({ dataDir });
    const listener = (await status(server)).ollama_listener;
    expect(listener?.state).toBe('listening');
    url = listener!.url!;
    ollama = new Ollama({ host: url });
  });

  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  it('listens on 127.0.0.1 and answers GET / as Ollama does', async () => {
    expect(new URL(url).hostname).toBe('127.0.0.1');
    expect(new URL(url).port).not.toBe(new URL(server.url).port);
    const root = await fetch(`${url}/`);
    expect(root.status).toBe(200);
    expect(await root.text()).toBe('Ollama is running');
  });

  it('answers list, show, ps, chat (streamed and not), generate and embed with the ollama client', async () => {
    expect((await ollama.version()).version).toMatch(/^\d+\.\d+\.\d+$/);
    expect((await ollama.list()).models.map((model) => model.name)).toEqual(expect.arrayContaining(['tiny:latest', 'tiny-embed:latest']));
    expect((await ollama.show({ model: 'tiny' })).capabilities).toContain('completion');
    const whole = await ollama.chat({ model: 'tiny', messages: [{ role: 'user', content: 'Hi' }], stream: false, options: { num_predict: 3, seed: 2 } });
    expect(whole).toMatchObject({ done: true, eval_count: 3 });
    let streamed = '';
    let done = false;
    for await (const part of await ollama.chat({
      model: 'tiny',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      options: { num_predict: 3, seed: 2 },
    })) {
      streamed += part.message.content;
      done = part.done;
    }
    expect(done).toBe(true);
    expect(streamed).toBe(whole.message.content);
    expect((await ollama.ps()).models.map((model) => model.name)).toContain('tiny:latest');
    expect(await ollama.generate({ model: 'tiny', prompt: 'Once', stream: false, options: { num_predict: 2 } })).toMatchObject({ done: true, eval_count: 2 });
    expect((await ollama.embed({ model: 'tiny-embed', input: ['a', 'b'] })).embeddings).toHaveLength(2);
  });

  it("serves nothing but Ollama's API: other paths get a 404 in Ollama's shape", async () => {
    for (const path of ['/v1/models', '/health', '/memory']) {
      const response = await fetch(`${url}${path}`);
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: string }).error).toMatch(/this port answers only Ollama's API/);
    }
    // An admin path is refused by the perimeter before the 404: no status is ever told there.
    const admin = await fetch(`${url}/admin/status`);
    expect(admin.status).toBeGreaterThanOrEqual(400);
    expect(Object.keys((await admin.json()) as object)).toEqual(['error']);
  });

  it("refuses bad input in Ollama's shape there too", async () => {
    const unknown = await fetch(`${url}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'nope', messages: [] }),
    });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: string }).error).toMatch(/^model "nope" not found/);
  });
});

describe('the Ollama listener, its port taken', () => {
  let server: RunningServer;
  let blocker: Server;
  let port: number;

  beforeAll(async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    port = (blocker.address() as { port: number }).port;
    const dataDir = await keyRequiredDataDir({ withModel: true, serverYaml: `  ollama:\n    enabled: true\n    port: ${port}\n` });
    server = await startServer({ dataDir });
  });

  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    await new Promise((resolve) => blocker.close(resolve));
  });

  it('keeps the companion running and says why on the status the Server screen reads', async () => {
    const listener = (await status(server)).ollama_listener;
    expect(listener?.state).toBe('refused');
    expect(listener?.problem).toMatch(new RegExp(`Port ${port} on 127\\.0\\.0\\.1 is already in use`));
    expect((await send(server, '/health')).status).toBe(200);
  });

  it("guards /api like /v1 on the main listener: without the key, 401 in Ollama's shape", async () => {
    const response = await send(server, '/api/tags');
    expect(response.status).toBe(401);
    expect(Object.keys((await response.json()) as object)).toEqual(['error']);
  });
});
