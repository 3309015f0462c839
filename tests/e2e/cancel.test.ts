import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerStatus } from '#shared/api/admin.js';
import { startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server.stop();
});

async function loaded(): Promise<ServerStatus['loaded']> {
  return ((await (await fetch(`${server.url}/admin/status`)).json()) as ServerStatus).loaded;
}

const busySequences = async () => (await loaded()).reduce((sum, model) => sum + model.busy, 0);

describe('a client that disconnects', () => {
  it('stops generation at once and leaves the server healthy', async () => {
    const controller = new AbortController();
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', stream: true, max_tokens: 1_000_000, messages: [{ role: 'user', content: 'Go on forever' }] }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    let seen = '';
    while (!seen.includes('"content":"') || seen.split('data:').length < 5) seen += new TextDecoder().decode((await reader.read()).value);
    expect(await busySequences()).toBe(1);
    controller.abort();
    await expect.poll(busySequences, { timeout: 10_000, interval: 50 }).toBe(0);
    // The context holds about 2000 tokens of room: an uncancelled stream would generate them all.
    const generated = (await loaded())[0]!.generated_tokens;
    expect(generated).toBeLessThan(1000);

    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
    const after = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', max_tokens: 5, messages: [{ role: 'user', content: 'Still there?' }] }),
    });
    expect(after.status).toBe(200);
  });
});
