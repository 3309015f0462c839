/**
 * Hosted video by quote, against a fixture server speaking OpenAI's video jobs API: quote ->
 * confirm -> job -> artifact copied into the data folder; refusals (disabled, budget, expiry,
 * reuse, constraints); a restart follows the job again without sending it twice; a local image
 * request never reaches the paid provider.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { samplePng } from '../../helpers/images.js';
import { FAKE_MP4 } from '../../fixtures/media/openai-videos.js';
import { hostedConfig, post, quoteOf, until, VIDEO_TOKEN, videoProvider } from './hosted-app.js';

const TOKEN = VIDEO_TOKEN;

const videos = videoProvider();

const config = (budget = 1, enabled = true) => hostedConfig(videos.fixture.url, budget, enabled);
const start = (dataDir?: string, text = config()) => videos.open(text, dataDir);

describe('the fixture', () => {
  it('speaks the wire format the official OpenAI client uses', async () => {
    const client = new OpenAI({ baseURL: videos.fixture.url, apiKey: TOKEN });
    const created = await client.videos.create({ prompt: 'A lighthouse', model: 'sora-2', seconds: '4', size: '720x1280' });
    expect(created).toMatchObject({ object: 'video', status: 'queued', model: 'sora-2' });
    await client.videos.retrieve(created.id);
    expect((await client.videos.retrieve(created.id)).status).toBe('completed');
    const content = await client.videos.downloadContent(created.id);
    expect(Buffer.from(await content.arrayBuffer())).toEqual(FAKE_MP4);
  });
});

describe('hosted video by quote', () => {
  it('quotes, dispatches on confirmation, follows the job and copies the video into the data folder', async () => {
    const { app, dataDir } = await start();
    const providers = (await app.inject({ method: 'GET', url: '/v1/media/providers' })).json();
    expect(providers.data[0]).toMatchObject({ name: 'videos', api: 'openai_videos', models: [{ id: 'sora-2', usd_per_second: 0.1 }] });
    expect(providers.budget).toMatchObject({ enabled: true, monthly_budget_usd: 1, spent_usd: 0 });

    const quote = (await quoteOf(app)).json();
    expect(quote).toMatchObject({ object: 'media.quote', model: 'sora-2', cost_usd: 0.8, currency: 'USD', constraints: { seconds: [4, 8, 12] } });
    expect(quote.expires_at).toBeGreaterThan(Date.now() / 1000);
    expect(videos.fixture.requests).toEqual([]);

    const submitted = await post(app, '/v1/media/jobs', { quote_id: quote.id, confirm: true });
    expect(submitted.statusCode).toBe(200);
    const job = submitted.json();
    expect(job).toMatchObject({ object: 'media.job', quote_id: quote.id, cost_usd: 0.8, content_url: null });
    expect(['queued', 'in_progress']).toContain(job.status);
    expect(job.remote_id).toMatch(/^video_/);

    const done = await until(app, job.id, 'completed');
    expect(done.content_url).toBe(`/v1/media/jobs/${job.id}/content`);
    const content = await app.inject({ method: 'GET', url: done.content_url });
    expect(content.headers['content-type']).toBe('video/mp4');
    expect(content.rawPayload).toEqual(FAKE_MP4);
    expect(readFileSync(join(dataDir, 'media', `${job.id}.mp4`))).toEqual(FAKE_MP4);
    // One submission; status retrieved before the download.
    const paths = videos.fixture.requests.map((request) => `${request.method} ${request.path.split('?')[0]}`);
    expect(paths.filter((path) => path === 'POST /v1/videos')).toHaveLength(1);
    expect(paths.indexOf(`GET /v1/videos/${job.remote_id}`)).toBeLessThan(paths.indexOf(`GET /v1/videos/${job.remote_id}/content`));
    expect((await app.inject({ method: 'GET', url: '/v1/media/providers' })).json().budget.spent_usd).toBe(0.8);
  });

  it('sends the first frame of image-to-video as input_reference', async () => {
    const { app } = await start();
    const frame = await samplePng(32, 24);
    const png = 'data:image/png;base64,' + frame.toString('base64');
    const quote = (await quoteOf(app, { operation: 'video.from_image', input_image: png, seconds: 4 })).json();
    const job = (await post(app, '/v1/media/jobs', { quote_id: quote.id, confirm: true })).json();
    expect(videos.fixture.videos.get(job.remote_id)?.reference).toEqual({ type: 'image/png', bytes: frame.length });
  });

  it('refuses without confirmation, twice for one quote, after expiry, beyond the budget and outside the constraints', async () => {
    const { app, services } = await start(undefined, config(1.5));
    const quote = (await quoteOf(app)).json();
    const unconfirmed = await post(app, '/v1/media/jobs', { quote_id: quote.id, confirm: false });
    expect(unconfirmed.statusCode).toBe(400);
    expect(unconfirmed.json().error.param).toBe('confirm');
    expect((await post(app, '/v1/media/jobs', { quote_id: 'quote_nope', confirm: true })).json().error.code).toBe('quote_not_found');

    expect((await post(app, '/v1/media/jobs', { quote_id: quote.id, confirm: true })).statusCode).toBe(200);
    const again = await post(app, '/v1/media/jobs', { quote_id: quote.id, confirm: true });
    expect([again.statusCode, again.json().error.code]).toEqual([404, 'quote_not_found']);

    const second = (await quoteOf(app)).json();
    const over = await post(app, '/v1/media/jobs', { quote_id: second.id, confirm: true });
    expect([over.statusCode, over.json().error.code]).toEqual([402, 'budget_exceeded']);

    const small = (await quoteOf(app, { seconds: 4 })).json();
    services.db.prepare('UPDATE media_quotes SET expires_at = ? WHERE id = ?').run(Date.now() - 1, small.id);
    const expired = await post(app, '/v1/media/jobs', { quote_id: small.id, confirm: true });
    expect([expired.statusCode, expired.json().error.code]).toEqual([409, 'quote_expired']);

    const wrong = await quoteOf(app, { seconds: 5 });
    expect([wrong.statusCode, wrong.json().error.param]).toEqual([400, 'seconds']);
    expect((await quoteOf(app, { size: '640x480' })).json().error.param).toBe('size');
    expect((await quoteOf(app, { provider: 'elsewhere' })).json().error.code).toBe('media_provider_not_found');
    expect(videos.fixture.requests.filter((request) => request.method === 'POST')).toHaveLength(1);
  });

  it('refuses quotes and jobs while images.hosted.enabled is false, even for a quote made before', async () => {
    const { app, services } = await start();
    const quote = (await quoteOf(app)).json();
    services.reconfigure({ ...services.config, images: { ...services.config.images, hosted: { ...services.config.images.hosted, enabled: false } } });
    const refused = await post(app, '/v1/media/jobs', { quote_id: quote.id, confirm: true });
    expect([refused.statusCode, refused.json().error.code]).toEqual([403, 'hosted_media_disabled']);
    expect((await quoteOf(app)).json().error.code).toBe('hosted_media_disabled');
    expect(videos.fixture.requests).toEqual([]);
  });

  it('records a job the provider fails, and counts it against the budget (the provider made it)', async () => {
    videos.fixture.options.fail = true;
    const { app } = await start();
    const job = (await post(app, '/v1/media/jobs', { quote_id: (await quoteOf(app)).json().id, confirm: true })).json();
    const failed = await until(app, job.id, 'failed');
    // The provider's own code is not one of Hearth's: it is named in the words of provider_failed.
    expect(failed.error).toEqual({ code: 'provider_failed', message: "The prompt was blocked. (The provider's code: moderation_blocked.)" });
    expect((await app.inject({ method: 'GET', url: `/v1/media/jobs/${job.id}/content` })).json().error.code).toBe('media_content_unavailable');
    expect((await app.inject({ method: 'GET', url: '/v1/media/providers' })).json().budget.spent_usd).toBe(0.8);
  });

  it('follows a job again after a restart without submitting it again', async () => {
    videos.fixture.options.completeAfter = Infinity;
    const first = await start();
    const job = (await post(first.app, '/v1/media/jobs', { quote_id: (await quoteOf(first.app)).json().id, confirm: true })).json();
    await until(first.app, job.id, 'in_progress');
    await videos.close(first);

    videos.fixture.options.completeAfter = 1;
    const second = await start(first.dataDir);
    const done = await until(second.app, job.id, 'completed');
    expect(done.remote_id).toBe(job.remote_id);
    expect(videos.fixture.requests.filter((request) => request.method === 'POST')).toHaveLength(1);
    expect(existsSync(join(first.dataDir, 'media', `${job.id}.mp4`))).toBe(true);
  });

  it('looks up a submission whose answer was lost instead of sending it again', async () => {
    videos.fixture.options.loseCreateAnswer = true;
    const { app } = await start();
    const job = (await post(app, '/v1/media/jobs', { quote_id: (await quoteOf(app)).json().id, confirm: true })).json();
    expect(job.status).toBe('submitting');
    const done = await until(app, job.id, 'completed');
    expect(done.remote_id).toMatch(/^video_/);
    expect(videos.fixture.requests.filter((request) => request.method === 'POST')).toHaveLength(1);
    expect(videos.fixture.requests.some((request) => request.method === 'GET' && request.path.startsWith('/v1/videos?'))).toBe(true);
  });

  it('never sends a local image request to the paid provider', async () => {
    const { app } = await start();
    for (const model of ['sora-2', 'videos/sora-2']) {
      const response = await post(app, '/v1/images/generations', { model, prompt: 'a cat' });
      expect([response.statusCode, response.json().error.code]).toEqual([404, 'model_not_found']);
    }
    expect((await app.inject({ method: 'GET', url: '/v1/images/models' })).json().data.map((model: { id: string }) => model.id)).not.toContain('videos/sora-2');
    expect(videos.fixture.requests).toEqual([]);
  });
});
