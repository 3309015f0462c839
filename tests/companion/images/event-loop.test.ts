/**
 * Image engines run beside the event loop, not on it: against a real `hearth serve`, /health
 * answers while an ESRGAN upscale works through its tiles and while a Stable Diffusion step runs,
 * and a cancel stops an upscale within one tile and a generation within one step.
 */
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { esrganPackages } from '../../../companion/src/images/upscale/esrgan.js';
import { writeTinyStableDiffusion } from '../../../scripts/onnx/tiny-sd.js';
import { samplePng } from '../../helpers/images.js';
import { startServer, type RunningServer } from '../../helpers/server.js';
import { tempFolder } from '../../helpers/temp.js';

let server: RunningServer;

beforeAll(async () => {
  const dataDir = tempFolder('event-loop');
  const models = join(dataDir, 'models');
  mkdirSync(models, { recursive: true });
  // ESRGAN-slim's x2 weights in 32-pixel tiles: a 160x160 image is 25 tiles, seconds of work.
  const slim = esrganPackages().find((source) => source.id === 'esrgan-slim')!;
  cpSync(dirname(slim.files.get(2)!), join(models, 'tiled', 'x2'), { recursive: true });
  writeFileSync(join(models, 'tiled', 'upscaler.json'), JSON.stringify({ patch_size: 32 }));
  // A UNet whose one step at 1024x1024 takes about a second on one thread.
  writeTinyStableDiffusion(join(models, 'heavy'), { unetWidth: 128, unetLayers: 16, sampleSize: 64 });
  writeFileSync(join(dataDir, 'config.yaml'), 'version: 1\nmodels:\n  threads: 1\n');
  server = await startServer({ dataDir, withModel: false });
});
afterAll(async () => {
  await server?.stop();
});

interface Event {
  event: string;
  data: any;
}

/** A streamed image request whose events are collected as they arrive. */
function streamed(path: string, body: FormData | object) {
  const events: Event[] = [];
  const waiters: { match: (event: Event) => boolean; resolve: (event: Event) => void }[] = [];
  const done = (async () => {
    const json = !(body instanceof FormData);
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: json ? { 'content-type': 'application/json' } : {},
      body: json ? JSON.stringify({ ...body, stream: true }) : body,
    });
    if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = { event: /^event: (.+)$/m.exec(block)![1]!, data: JSON.parse(/^data: (.+)$/m.exec(block)![1]!) };
        events.push(event);
        for (const waiter of waiters.filter((entry) => entry.match(event))) waiter.resolve(event);
      }
    }
    return events;
  })();
  const until = (match: (event: Event) => boolean) =>
    new Promise<Event>((resolve, reject) => {
      const seen = events.find(match);
      if (seen) return resolve(seen);
      waiters.push({ match, resolve });
      done.then(() => reject(new Error(`the stream ended without the event: ${JSON.stringify(events.map((event) => event.event))}`)), reject);
    });
  return { events, done, until };
}

async function upscaleForm(): Promise<FormData> {
  const form = new FormData();
  form.set('model', 'tiled');
  form.set('scale', '2');
  form.set('stream', 'true');
  form.set('image', new Blob([new Uint8Array(await samplePng(160, 160))], { type: 'image/png' }), 'big.png');
  return form;
}

const job = async (id: string) => (await fetch(`${server.url}/v1/images/jobs/${id}`)).json();
const cancel = async (id: string) =>
  (
    await fetch(`${server.url}/v1/images/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ job_id: id }) })
  ).json();
const health = async () => (await fetch(`${server.url}/health`)).json();

describe('an ESRGAN upscale', () => {
  it('leaves /health answering while it works through its tiles', async () => {
    const run = streamed('/v1/images/upscale', await upscaleForm());
    const first = await run.until((event) => event.event === 'image.progress');
    expect(first.data.steps).toBe(25);
    expect(await health()).toMatchObject({ status: 'ok' });
    // /health answered while tiles were still left: the engine did not hold the event loop.
    const during = await job(first.data.job_id);
    expect(during.status).toBe('generating');
    expect(during.step).toBeLessThan(25);
    const events = await run.done;
    expect(events.at(-1)!.event).toBe('image.completed');
    expect(events.at(-1)!.data.data[0]).toMatchObject({ width: 320, height: 320 });
  });

  it('stops within one tile of a cancel, and the next upscale runs on the loaded model', async () => {
    const run = streamed('/v1/images/upscale', await upscaleForm());
    const first = await run.until((event) => event.event === 'image.progress');
    const id = first.data.job_id;
    const asked = await cancel(id);
    expect(asked).toMatchObject({ status: 'generating', cancel_requested: true });
    const events = await run.done;
    expect(events.at(-1)!.event).toBe('image.cancelled');
    const stopped = await job(id);
    expect(stopped.status).toBe('cancelled');
    // The tile under way when the cancel arrived may finish (and one whose progress was still
    // on its way to the event loop); no further tile is started.
    const tiles = events.filter((event) => event.event === 'image.progress').length;
    expect(stopped.step).toBe(tiles);
    expect(tiles).toBeLessThanOrEqual(asked.step + 2);
    expect(tiles).toBeLessThan(25);

    const again = streamed('/v1/images/upscale', await upscaleForm());
    expect((await again.done).at(-1)!.event).toBe('image.completed');
  });
});

describe('a Stable Diffusion generation', () => {
  it('leaves /health answering during a denoising step, and stops within one step of a cancel', async () => {
    const run = streamed('/v1/images/generations', { model: 'heavy', prompt: 'a slow fire', size: '1024x1024', steps: 4, guidance: 1 });
    const first = await run.until((event) => event.event === 'image.progress');
    expect(await health()).toMatchObject({ status: 'ok' });
    // Asked after step 1 ended: the answer came while step 2 was running.
    expect((await job(first.data.job_id)).step).toBe(1);
    const asked = await cancel(first.data.job_id);
    const events = await run.done;
    expect(events.at(-1)!.event).toBe('image.cancelled');
    const steps = events.filter((event) => event.event === 'image.progress').length;
    expect(steps).toBeLessThanOrEqual(asked.step + 2);
    expect(steps).toBeLessThan(4);
  });
});
