/**
 * Image jobs over real HTTP: cancelling between steps, the queue rule after a cancel, a client
 * that leaves, and memory shared with language models.
 */
import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERY_JOB } from '../../../companion/src/images/jobs/job-store.js';
import { testApp } from '../../helpers/app.js';
import { imageDataDir, SLOW_UNET } from '../../helpers/images.js';
import { tinyModelPath } from '../../helpers/models.js';

let running: Awaited<ReturnType<typeof testApp>>;
let base: string;
let dataDir: string;

beforeAll(async () => {
  dataDir = imageDataDir({ slow: SLOW_UNET, quick: {} });
  copyFileSync(await tinyModelPath(), join(dataDir, 'models', 'tiny.gguf'));
  // Room for the image model or the language model, not both: an image job unloads the idle one.
  writeFileSync(join(dataDir, 'config.yaml'), 'version: 1\nmodels:\n  memory_budget_mb: 150\n  threads: 1\n');
  running = await testApp({ dataDir });
  base = await running.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await running?.close();
});

interface Streamed {
  events: { event: string; data: any }[];
  /** Resolves with the events seen so far once one matches. */
  until(match: (event: { event: string; data: any }) => boolean): Promise<void>;
  done: Promise<void>;
  abort(): void;
}

/** Starts a streamed generation and collects its events as they arrive. */
function stream(body: object): Streamed {
  const controller = new AbortController();
  const events: Streamed['events'] = [];
  const waiters: { match: (event: { event: string; data: any }) => boolean; resolve: () => void }[] = [];
  const done = (async () => {
    const response = await fetch(`${base}/v1/images/generations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true }),
      signal: controller.signal,
    });
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = { event: /^event: (.+)$/m.exec(block)![1]!, data: JSON.parse(/^data: (.+)$/m.exec(block)![1]!) };
        events.push(event);
        for (const waiter of waiters.filter((entry) => entry.match(event))) waiter.resolve();
      }
    }
  })().catch((error: unknown) => {
    if (!controller.signal.aborted) throw error;
  });
  return {
    events,
    done,
    abort: () => controller.abort(),
    until: (match) => (events.some(match) ? Promise.resolve() : new Promise((resolve) => waiters.push({ match, resolve }))),
  };
}

const post = (path: string, body: object) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const job = async (id: string) => (await fetch(`${base}/v1/images/jobs/${id}`)).json();
const slow = { model: 'slow', prompt: 'a slow fire', size: '256x256', steps: 150 };

describe('cancelling', () => {
  it('stops a running job between steps; it reports cancelled and stores nothing', async () => {
    const run = stream(slow);
    await run.until((event) => event.event === 'image.progress');
    const id = run.events[0]!.data.job_id;
    const asked = await (await post('/v1/images/cancel', { job_id: id })).json();
    expect(asked.cancel_requested).toBe(true);
    await run.done;
    const last = run.events.at(-1)!;
    expect(last.event).toBe('image.cancelled');
    expect(last.data.step).toBeLessThan(150);
    const record = await job(id);
    expect(record).toMatchObject({ status: 'cancelled', cancel_requested: true, results: [] });
    expect(record.notes).toContain('The job was cancelled.');
    expect(existsSync(join(dataDir, 'images', id))).toBe(false);
    // Cancelling a finished job changes nothing.
    expect((await (await post('/v1/images/cancel', { job_id: id })).json()).status).toBe('cancelled');
    expect((await post('/v1/images/cancel', { job_id: 'job_unknown' })).status).toBe(404);
  });

  it('starts the next job for the same model only once the cancelled one has stopped', async () => {
    const first = stream(slow);
    await first.until((event) => event.event === 'image.progress');
    const firstId = first.events[0]!.data.job_id;
    await post('/v1/images/cancel', { job_id: firstId });
    const second = stream({ ...slow, steps: 2 });
    let firstWhenSecondPrepared: string | undefined;
    await second.until((event) => {
      if (event.event === 'image.stage' && event.data.stage === 'preparing') firstWhenSecondPrepared = running.services.images.job(firstId, EVERY_JOB).status;
      return event.event === 'image.completed';
    });
    await Promise.all([first.done, second.done]);
    expect(second.events[0]!.data).toMatchObject({ stage: 'queued' });
    expect(firstWhenSecondPrepared).toBe('cancelled');
    expect(first.events.at(-1)!.event).toBe('image.cancelled');
  });

  it('cancels a job whose client went away', async () => {
    const run = stream(slow);
    await run.until((event) => event.event === 'image.progress');
    const id = run.events[0]!.data.job_id;
    run.abort();
    await expect.poll(async () => (await job(id)).status, { message: 'the job did not stop' }).toBe('cancelled');
    expect((await job(id)).notes).toContain('The client disconnected, so the job was cancelled.');
  });

  it('cancels a queued job at once, without running it', async () => {
    const first = stream(slow);
    await first.until((event) => event.event === 'image.progress');
    const queued = stream({ ...slow, steps: 3 });
    await queued.until((event) => event.event === 'image.stage');
    const queuedId = queued.events[0]!.data.job_id;
    await post('/v1/images/cancel', { job_id: queuedId });
    await queued.done;
    expect(queued.events.map((event) => event.event)).toEqual(['image.stage', 'image.cancelled']);
    expect((await job(queuedId)).started_at).toBeNull();
    await post('/v1/images/cancel', { job_id: first.events[0]!.data.job_id });
    await first.done;
  });
});

describe('memory shared with language models', () => {
  it('unloads an idle language model to make room, says so, and loads it again afterwards', async () => {
    const chat = await post('/v1/chat/completions', { model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
    expect(chat.status).toBe(200);
    expect(running.services.engine.isLoaded('tiny')).toBe(true);
    const run = stream({ model: 'quick', prompt: 'a cat', steps: 2 });
    await run.done;
    const notice = run.events.find((event) => event.event === 'image.stage' && event.data.message);
    expect(notice?.data).toMatchObject({ stage: 'preparing', message: expect.stringMatching(/Unloaded the idle language model tiny/) });
    const id = run.events[0]!.data.job_id;
    expect((await job(id)).notes[0]).toMatch(/Unloaded the idle language model tiny to make room for quick/);
    await expect.poll(() => running.services.engine.isLoaded('tiny'), { timeout: 30_000, message: 'tiny was not loaded again' }).toBe(true);
  });
});
