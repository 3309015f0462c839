/**
 * The /v1/images routes on the real app: model listing, generation (JSON and SSE), edits and
 * upscaling (multipart), the gallery and stored files, local image providers, and bad input.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp } from '../../helpers/app.js';
import { imageDataDir, leftHalfMask, multipart, samplePng, sseEvents } from '../../helpers/images.js';
import { startImagesFixture, type ImagesFixture } from '../../fixtures/images/openai-images.js';

let running: Awaited<ReturnType<typeof testApp>>;
let provider: ImagesFixture;
let dataDir: string;
const app = () => running.app;
process.env.HEARTH_TEST_IMAGES_KEY = 'local-images-key';

beforeAll(async () => {
  provider = await startImagesFixture('local-images-key');
  dataDir = imageDataDir({ 'tiny-sd': {}, 'tiny-turbo': { scheduler: 'EulerDiscreteScheduler' }, 'half-sd': { omit: ['vae_decoder'] } });
  writeFileSync(
    join(dataDir, 'config.yaml'),
    `version: 1\nproviders:\n  - name: localai\n    base_url: ${provider.url}\n    api_key: env:HEARTH_TEST_IMAGES_KEY\n    models: [chat-model]\n    image_models: [sd-small]\n`,
  );
  running = await testApp({ dataDir });
});
afterAll(async () => {
  await running?.close();
  await provider?.close();
});

const generate = (payload: object) => app().inject({ method: 'POST', url: '/v1/images/generations', payload });
const upload = async (url: string, fields: Record<string, string>, files: Record<string, Buffer | Buffer[]>) =>
  app().inject({ method: 'POST', url, ...(await multipart(fields, files)) });

describe('GET /v1/images/models', () => {
  it('lists model folders, packaged upscalers, Lanczos and provider image models with capabilities', async () => {
    const { data } = (await app().inject({ method: 'GET', url: '/v1/images/models' })).json();
    const byId = Object.fromEntries(data.map((model: any) => [model.id, model]));
    expect(byId['tiny-sd']).toMatchObject({
      object: 'model',
      kind: 'image',
      source: 'models-dir',
      engine: 'onnx-sd',
      loaded: false,
      defaults: { size: '64x64', steps: 25 },
    });
    expect(byId['tiny-sd'].capabilities).toEqual({
      generate: true,
      edit: true,
      upscale: false,
      mask: true,
      multiple_references: false,
      negative_prompt: true,
      strength: true,
    });
    expect(byId['tiny-turbo'].capabilities.negative_prompt).toBe(false);
    expect(byId['half-sd'].error).toMatch(/vae_decoder\/model\.onnx is missing/);
    expect(byId['esrgan-slim']).toMatchObject({
      source: 'package',
      engine: 'esrgan',
      capabilities: { upscale: true, generate: false },
      limits: { scales: [2, 3, 4, 8] },
    });
    expect(byId.lanczos).toMatchObject({ source: 'builtin', capabilities: { upscale: true } });
    expect(byId['localai/sd-small']).toMatchObject({ source: 'provider', capabilities: { generate: true, edit: true } });
    expect(byId['localai/chat-model']).toBeUndefined();
  });
});

describe('generation', () => {
  it('answers b64_json with the seed and the job id, and keeps the result in the gallery', async () => {
    const response = await generate({ model: 'tiny-sd', prompt: 'a photo of a cat', size: '64x48', steps: 4, seed: 77, n: 2 });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.job_id).toMatch(/^job_/);
    expect(body.data.map((item: any) => [item.seed, item.width, item.height])).toEqual([
      [77, 64, 48],
      [78, 64, 48],
    ]);
    expect(await sharp(Buffer.from(body.data[0].b64_json, 'base64')).metadata()).toMatchObject({ format: 'png', width: 64, height: 48 });
    const again = (await generate({ model: 'tiny-sd', prompt: 'a photo of a cat', size: '64x48', steps: 4, seed: 77 })).json();
    expect(again.data[0].b64_json).toBe(body.data[0].b64_json);

    const job = (await app().inject({ method: 'GET', url: `/v1/images/jobs/${body.job_id}` })).json();
    expect(job).toMatchObject({
      object: 'image.job',
      operation: 'generate',
      model: 'tiny-sd',
      status: 'completed',
      step: 8,
      steps: 8,
      seed: 77,
      size: '64x48',
      prompt: 'a photo of a cat',
    });
    const file = await app().inject({ method: 'GET', url: job.results[1].url });
    expect(file.headers['content-type']).toBe('image/png');
    expect(file.rawPayload.toString('base64')).toBe(body.data[1].b64_json);
    const gallery = (await app().inject({ method: 'GET', url: '/v1/images/jobs?limit=1' })).json();
    expect(gallery.data.map((entry: any) => entry.id)).toEqual([again.job_id]);
  });

  it('answers url with an address the companion serves', async () => {
    const body = (await generate({ model: 'tiny-turbo', prompt: 'the hearth', response_format: 'url' })).json();
    expect(body.data[0].url).toMatch(/^http:\/\/[^/]+\/v1\/images\/files\/job_[\w-]+\/0\.png$/);
    const file = await app().inject({ method: 'GET', url: new URL(body.data[0].url).pathname });
    expect(await sharp(file.rawPayload).metadata()).toMatchObject({ width: 64, height: 64 });
  });

  it('streams stages, progress and previews, then the result; previews are never stored', async () => {
    const response = await generate({ model: 'tiny-sd', prompt: 'a red house', size: '64x64', steps: 10, stream: true });
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = sseEvents(response.payload);
    const kinds = events.map((event) => (event.event === 'image.stage' ? `stage:${event.data.stage}` : event.event));
    expect(kinds.slice(0, 3)).toEqual(['stage:queued', 'stage:preparing', 'stage:generating']);
    expect(kinds.at(-1)).toBe('image.completed');
    expect(events.filter((event) => event.event === 'image.progress').map((event) => event.data.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const previews = events.filter((event) => event.event === 'image.preview');
    expect(previews.length).toBeGreaterThan(0);
    expect(previews.every((event) => event.data.step < 10)).toBe(true);
    const done = events.at(-1)!.data;
    expect(previews.map((event) => event.data.b64_json)).not.toContain(done.data[0].b64_json);
    expect(readdirSync(join(dataDir, 'images', done.job_id))).toEqual(['0.png']);
  });

  it('refuses what the model cannot do, unknown models, bad sizes and steps', async () => {
    const cases: [object, number, string, string | null][] = [
      [{ model: 'nope', prompt: 'x' }, 404, 'model_not_found', 'model'],
      [{ model: 'esrgan-slim', prompt: 'x' }, 400, 'model_capability_missing', 'model'],
      [{ model: 'half-sd', prompt: 'x' }, 400, 'model_incomplete', 'model'],
      [{ model: 'tiny-turbo', prompt: 'x', negative_prompt: 'blurry' }, 400, 'model_capability_missing', 'negative_prompt'],
      [{ model: 'tiny-sd', prompt: 'x', size: '60x64' }, 400, 'invalid_request_error', 'size'],
      [{ model: 'tiny-sd', prompt: 'x', size: '100000x100000' }, 400, 'invalid_request_error', 'size'],
      [{ model: 'tiny-sd', prompt: 'x', size: '512x512' }, 400, 'invalid_request_error', 'size'],
      [{ model: 'tiny-sd', prompt: 'x', size: 'big' }, 400, 'invalid_request_error', 'size'],
      [{ model: 'tiny-sd', prompt: 'x', steps: 151 }, 400, 'invalid_request_error', 'steps'],
      [{ model: 'tiny-sd', prompt: 'x', n: 9 }, 400, 'invalid_request_error', 'n'],
      [{ model: 'tiny-sd', prompt: 'x', seed: -1 }, 400, 'invalid_request_error', 'seed'],
      [{ model: 'tiny-sd', prompt: 'x', quality: 'hd' }, 400, 'invalid_request_error', 'quality'],
      [{ model: 'tiny-sd' }, 400, 'invalid_request_error', 'prompt'],
    ];
    for (const [payload, status, code, param] of cases) {
      const response = await generate(payload);
      expect([JSON.stringify(payload), response.statusCode, response.json().error.code, response.json().error.param]).toEqual([
        JSON.stringify(payload),
        status,
        code,
        param,
      ]);
    }
  });
});

describe('edits', () => {
  it('edits an uploaded image with strength and a mask, at the requested size', async () => {
    const image = await samplePng(80, 60);
    const response = await upload(
      '/v1/images/edits',
      { model: 'tiny-sd', prompt: 'a dog', strength: '0.6', steps: '10', size: '64x48', seed: '3' },
      { image, mask: await leftHalfMask(80, 60) },
    );
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.data[0]).toMatchObject({ width: 64, height: 48, seed: 3 });
    const job = (await app().inject({ method: 'GET', url: `/v1/images/jobs/${body.job_id}` })).json();
    expect(job).toMatchObject({ operation: 'edit', steps: 6, step: 6, status: 'completed' });
  });

  it('takes the source size, rounded to the model multiple, when no size is given', async () => {
    const body = (await upload('/v1/images/edits', { model: 'tiny-sd', prompt: 'a dog', steps: '2' }, { image: await samplePng(70, 50) })).json();
    expect(body.data[0]).toMatchObject({ width: 64, height: 48 });
  });

  it('refuses non-image bytes, stray and misplaced fields, JSON bodies and generation-only use', async () => {
    const notImage = await upload('/v1/images/edits', { model: 'tiny-sd', prompt: 'x' }, { image: Buffer.from('this is not a picture') });
    expect([notImage.statusCode, notImage.json().error.code, notImage.json().error.param]).toEqual([400, 'invalid_image', 'image']);
    const badMask = await upload('/v1/images/edits', { model: 'tiny-sd', prompt: 'x' }, { image: await samplePng(64, 64), mask: Buffer.from('no') });
    expect([badMask.statusCode, badMask.json().error.param]).toEqual([400, 'mask']);
    const stray = await upload('/v1/images/edits', { model: 'tiny-sd', prompt: 'x', colour: 'red' }, { image: await samplePng(64, 64) });
    expect([stray.statusCode, stray.json().error.param]).toEqual([400, 'colour']);
    const textImage = await upload('/v1/images/edits', { model: 'tiny-sd', prompt: 'x', image: 'abc' }, {});
    expect(textImage.json().error.message).toMatch(/must be sent as a file/);
    const missing = await upload('/v1/images/edits', { model: 'tiny-sd', prompt: 'x' }, {});
    expect([missing.statusCode, missing.json().error.param]).toEqual([400, 'image']);
    const twoImages = await upload('/v1/images/edits', { model: 'tiny-sd', prompt: 'x' }, { 'image[]': [await samplePng(64, 64), await samplePng(64, 64)] });
    expect([twoImages.json().error.code, twoImages.json().error.param]).toEqual(['model_capability_missing', 'image']);
    const strength = await upload('/v1/images/edits', { model: 'tiny-sd', prompt: 'x', strength: 'lots' }, { image: await samplePng(64, 64) });
    expect([strength.statusCode, strength.json().error.param]).toEqual([400, 'strength']);
    const json = await app().inject({ method: 'POST', url: '/v1/images/edits', payload: { model: 'tiny-sd', prompt: 'x' } });
    expect([json.statusCode, json.json().error.code]).toEqual([415, 'unsupported_media_type']);
    const upscaler = await upload('/v1/images/edits', { model: 'lanczos', prompt: 'x' }, { image: await samplePng(64, 64) });
    expect(upscaler.json().error.code).toBe('model_capability_missing');
  });

  it("tells a form field's problem in the words a JSON body's gets, through the same schema", async () => {
    const image = await samplePng(64, 64);
    // [form fields, the JSON generation body with the same values, the message both get]
    const cases: [Record<string, string>, Record<string, unknown>, string][] = [
      [{ n: 'two' }, { n: 'two' }, 'n must be an integer.'],
      [{ n: '9' }, { n: 9 }, 'n must be at most 4.'],
      [{ seed: '1.5' }, { seed: 1.5 }, 'seed must be an integer.'],
      [{ guidance: '-1' }, { guidance: -1 }, 'guidance must be at least 0.'],
      [{ stream: 'yes' }, { stream: 'yes' }, 'stream must be a boolean.'],
      [{ response_format: 'png' }, { response_format: 'png' }, 'response_format must be one of: "b64_json", "url".'],
      [{ prompt: '' }, { prompt: undefined }, 'prompt is required.'],
    ];
    for (const [fields, values, message] of cases) {
      const form = await upload('/v1/images/edits', { model: 'tiny-sd', prompt: 'x', ...fields }, { image });
      const json = await generate({ model: 'tiny-sd', prompt: 'x', ...values });
      const param = Object.keys(fields)[0];
      expect([form.statusCode, form.json().error], JSON.stringify(fields)).toEqual([400, expect.objectContaining({ message, param })]);
      expect([json.statusCode, json.json().error], JSON.stringify(values)).toEqual([400, expect.objectContaining({ message, param })]);
    }
    const scale = await upload('/v1/images/upscale', { model: 'lanczos', scale: '20' }, { image });
    expect([scale.statusCode, scale.json().error.message]).toEqual([400, 'scale must be at most 16.']);
  });
});

describe('upscaling', () => {
  it('upscales with ESRGAN and Lanczos by the scales they offer', async () => {
    const image = await samplePng(48, 40);
    const esrgan = (await upload('/v1/images/upscale', { model: 'esrgan-slim', scale: '2' }, { image })).json();
    expect(esrgan.data[0]).toMatchObject({ width: 96, height: 80, seed: null });
    const lanczos = (await upload('/v1/images/upscale', { model: 'lanczos', scale: '4', response_format: 'url' }, { image })).json();
    expect(lanczos.data[0]).toMatchObject({ width: 192, height: 160 });
    const job = (await app().inject({ method: 'GET', url: `/v1/images/jobs/${esrgan.job_id}` })).json();
    expect(job).toMatchObject({ operation: 'upscale', size: '96x80', status: 'completed', steps: 1 });
  });

  it('refuses other scales, outputs over the pixel limit, non-images and generation models', async () => {
    const image = await samplePng(48, 40);
    expect((await upload('/v1/images/upscale', { model: 'esrgan-slim', scale: '5' }, { image })).json().error.param).toBe('scale');
    // A PNG whose header claims 5000 x 5000: x4 would be 400 megapixels.
    const huge = await sharp({ create: { width: 5000, height: 5000, channels: 3, background: '#000' } })
      .png({ compressionLevel: 9 })
      .toBuffer();
    const tooBig = await upload('/v1/images/upscale', { model: 'esrgan-slim', scale: '4' }, { image: huge });
    expect([tooBig.statusCode, tooBig.json().error.param]).toEqual([400, 'image']);
    expect((await upload('/v1/images/upscale', { model: 'lanczos', scale: '2' }, { image: Buffer.from('GIF89a but not really') })).json().error.code).toBe(
      'invalid_image',
    );
    expect((await upload('/v1/images/upscale', { model: 'tiny-sd', scale: '2' }, { image })).json().error.code).toBe('model_capability_missing');
    expect((await upload('/v1/images/upscale', { model: 'lanczos', scale: '2' }, { image: [image, image] })).json().error.param).toBe('image');
  });
});

describe('local image providers', () => {
  it('proxies generations and edits to an OpenAI-Images-compatible server and stores the results', async () => {
    const body = (await generate({ model: 'localai/sd-small', prompt: 'a lighthouse', size: '32x24', n: 2 })).json();
    expect(body.data).toHaveLength(2);
    expect(body.data[0]).toMatchObject({ width: 32, height: 24, seed: null });
    expect(provider.requests.at(-1)).toMatchObject({
      path: '/v1/images/generations',
      model: 'sd-small',
      fields: { prompt: 'a lighthouse', n: 2, response_format: 'b64_json' },
    });
    expect(existsSync(join(dataDir, 'images', body.job_id, '1.png'))).toBe(true);

    const edit = (
      await upload('/v1/images/edits', { model: 'localai/sd-small', prompt: 'at night' }, { image: await samplePng(32, 32), mask: await leftHalfMask(32, 32) })
    ).json();
    expect(edit.data).toHaveLength(1);
    expect(provider.requests.at(-1)).toMatchObject({ path: '/v1/images/edits', model: 'sd-small', files: { image: 1, mask: 1 } });

    const refused = await generate({ model: 'localai/sd-small', prompt: 'refuse' });
    expect([refused.statusCode, refused.json().error.code]).toEqual([502, 'provider_error']);
    expect(refused.json().error.message).toMatch(/refused by the fixture/);
    expect(refused.json().error.message).not.toContain('local-images-key');
  });
});

describe('the gallery', () => {
  it('deletes a finished job with its files, and 404s afterwards', async () => {
    const body = (await generate({ model: 'tiny-turbo', prompt: 'gone soon' })).json();
    const removed = await app().inject({ method: 'DELETE', url: `/v1/images/jobs/${body.job_id}` });
    expect(removed.json()).toEqual({ id: body.job_id, object: 'image.job.deleted', deleted: true });
    expect(existsSync(join(dataDir, 'images', body.job_id))).toBe(false);
    expect((await app().inject({ method: 'GET', url: `/v1/images/jobs/${body.job_id}` })).statusCode).toBe(404);
    expect((await app().inject({ method: 'GET', url: `/v1/images/files/${body.job_id}/0.png` })).statusCode).toBe(404);
    expect((await app().inject({ method: 'GET', url: '/v1/images/files/..%2F..%2Fconfig.yaml/0.png' })).statusCode).toBe(404);
  });
});
