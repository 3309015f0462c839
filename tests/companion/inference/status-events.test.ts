/**
 * The app's status stream: node-llama-cpp's load progress while a model loads, then samples of
 * tokens/s, queue and memory per loaded model, measured by the real engine on the tiny model.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerStatus, StatusEvent } from '#shared/api/admin.js';
import { registerAdminServer } from '../../helpers/admin-fetch.js';
import { testApp } from '../../helpers/app.js';
import { newDataDir } from '../../helpers/server.js';

let target: Awaited<ReturnType<typeof testApp>>;
let base: string;

beforeAll(async () => {
  const dataDir = await newDataDir(true);
  writeFileSync(join(dataDir, 'config.yaml'), 'version: 1\nmodels:\n  external_sources: false\n  threads: 1\n  context_size: 512\n  memory_budget_mb: 512\n');
  target = await testApp({ dataDir });
  await target.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(target.app.server.address() as { port: number }).port}`;
  registerAdminServer(base, dataDir);
});

afterAll(async () => {
  await target?.close();
});

/**
 * Reads the stream's events until `enough` says so. `opened` settles once the stream's first
 * event (its snapshot) has arrived: from then on every change is sent on it.
 */
function collect(controller: AbortController, enough: (events: StatusEvent[]) => boolean): { opened: Promise<void>; events: Promise<StatusEvent[]> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const events = (async () => {
    const response = await fetch(`${base}/admin/events`, { signal: controller.signal });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    const seen: StatusEvent[] = [];
    let buffer = '';
    while (!enough(seen)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const blocks = buffer.split('\n\n');
      buffer = blocks.pop()!;
      for (const block of blocks) if (block.startsWith('data: ')) seen.push(JSON.parse(block.slice(6)) as StatusEvent);
      if (seen.length > 0) open();
    }
    open();
    controller.abort();
    return seen;
  })();
  return { opened, events };
}

describe('GET /admin/events', () => {
  it('reports load progress, then samples with tokens/s, queue and memory of the loaded model', async () => {
    const controller = new AbortController();
    const seen = collect(controller, (events) =>
      events.some((event) => event.type === 'sample' && event.sample.models.some((model) => model.tokens_per_second > 0)),
    );
    // The stream is open once its snapshot has arrived: load, then generate.
    await seen.opened;
    // Samples often enough to see the generation below (the default interval is 2 s).
    const timer = setInterval(() => target.services.monitor.sample(), 50);
    const load = await fetch(`${base}/admin/models/tiny/load`, { method: 'POST' });
    expect(load.status).toBe(200);
    const chat = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 64 }),
    });
    expect(chat.status).toBe(200);
    const events = await seen.events.finally(() => clearInterval(timer));

    expect(events[0]).toMatchObject({ type: 'snapshot', memory_budget_bytes: 512 * 1024 * 1024, loading: [], downloads: [] });
    const loads = events.flatMap((event) => (event.type === 'load' ? [event.load] : []));
    expect(loads[0]).toEqual({ id: 'tiny', state: 'loading', fraction: 0 });
    expect(loads.at(-1)).toEqual({ id: 'tiny', state: 'ready' });
    const fractions = loads.flatMap((load) => (load.state === 'loading' ? [load.fraction] : []));
    expect(fractions.at(-1)).toBe(1);
    expect([...fractions].sort((a, b) => a - b)).toEqual(fractions);

    const active = events.flatMap((event) => (event.type === 'sample' ? event.sample.models : [])).find((model) => model.tokens_per_second > 0)!;
    expect(active.id).toBe('tiny');
    expect(active.memory_bytes).toBeGreaterThan(0);

    const status = (await (await fetch(`${base}/admin/status`)).json()) as ServerStatus;
    expect(status.memory_budget_bytes).toBe(512 * 1024 * 1024);
    expect(status.loaded[0]).toMatchObject({ id: 'tiny', generated_tokens: 64 });
    expect(status.loaded[0]!.memory_bytes).toBe(active.memory_bytes);
  });

  it('says when a load fails', async () => {
    // A truncated download: its metadata reads, its weights are missing.
    const whole = readFileSync(join(target.services.paths.models, 'tiny.gguf'));
    writeFileSync(join(target.services.paths.models, 'broken.gguf'), whole.subarray(0, Math.floor(whole.length / 2)));
    await target.services.catalog.local(true);
    const controller = new AbortController();
    const seen = collect(controller, (events) => events.some((event) => event.type === 'load' && event.load.state === 'failed'));
    await seen.opened;
    const load = await fetch(`${base}/admin/models/broken/load`, { method: 'POST' });
    expect(load.status).toBeGreaterThanOrEqual(400);
    const events = await seen.events;
    const failed = events.find((event) => event.type === 'load' && event.load.state === 'failed');
    expect(failed).toMatchObject({ load: { id: 'broken', state: 'failed' } });
    expect(failed?.type === 'load' && failed.load.state === 'failed' && failed.load.message).toMatch(/^broken could not be loaded/);
  });
});
