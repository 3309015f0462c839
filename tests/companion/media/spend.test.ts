/**
 * What hosted media counts as spent, against the fixture provider: a job counts unless Hearth
 * knows the provider never made it. An ambiguous answer to the create request (a 5xx, a body that
 * is not a video) is looked up among the provider's jobs and followed when found; a clear refusal
 * (a documented 4xx) or a connection that never reached the provider is not spent; a job the
 * provider made and failed, or whose video expired before it was copied, is. A provider that
 * answers 500 to every create it carries out cannot get more than the budget's worth made.
 */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { confirmNew, get, hostedConfig, post, quoteOf, spent, until, videoProvider, type HostedApp } from './hosted-app.js';

const videos = videoProvider();

const start = (budget = 1, url = videos.fixture.url): Promise<HostedApp> => videos.open(hostedConfig(url, budget));

const creates = () => videos.fixture.requests.filter((request) => request.method === 'POST').length;

describe('an ambiguous answer to the create request', () => {
  it('a 500 after the provider made the job: looked up, followed to the end, and spent', async () => {
    videos.fixture.options.createFailure = { status: 500, created: true };
    const { app } = await start();
    const job = await confirmNew(app);
    expect(job).toMatchObject({ status: 'submitting', remote_id: null });
    // Counted while it is being looked up.
    expect(await spent(app)).toBe(0.8);
    const done = await until(app, job.id, 'completed');
    expect(done.remote_id).toBe([...videos.fixture.videos.keys()][0]);
    expect(creates()).toBe(1);
    expect(await spent(app)).toBe(0.8);
  });

  it('a body that is not a video: looked up, followed, and spent', async () => {
    videos.fixture.options.garbageCreateAnswer = true;
    const { app } = await start();
    const job = await confirmNew(app);
    expect((await until(app, job.id, 'completed')).remote_id).toMatch(/^video_/);
    expect(creates()).toBe(1);
    expect(await spent(app)).toBe(0.8);
  });

  it('a 503 for a job the provider did not make: not found, so not made and not spent', async () => {
    videos.fixture.options.createFailure = { status: 503, created: false };
    const { app } = await start();
    const job = await confirmNew(app);
    const failed = await until(app, job.id, 'failed');
    expect(failed.error.code).toBe('not_submitted');
    expect(videos.fixture.requests.some((request) => request.method === 'GET' && request.path.startsWith('/v1/videos?'))).toBe(true);
    expect(creates()).toBe(1);
    expect(await spent(app)).toBe(0);
  });

  it('never claims one provider job for two of its own', async () => {
    videos.fixture.options.createFailure = { status: 502, created: true };
    const { app } = await start(2);
    const first = await confirmNew(app);
    const second = await confirmNew(app);
    const [a, b] = [await until(app, first.id, 'completed'), await until(app, second.id, 'completed')];
    expect(new Set([a.remote_id, b.remote_id]).size).toBe(2);
    expect(await spent(app)).toBe(1.6);
  });
});

describe('a clear refusal', () => {
  it.each([400, 429])('a %i: failed, not sent again, not spent', async (status) => {
    videos.fixture.options.createFailure = { status, created: false };
    const { app } = await start();
    const job = await confirmNew(app);
    expect(job).toMatchObject({ status: 'failed', remote_id: null, error: { code: 'provider_refused' } });
    expect(creates()).toBe(1);
    expect(await spent(app)).toBe(0);
  });

  it('a connection that never reached the provider: failed, not spent', async () => {
    // A port nothing listens on: the connection is refused before a byte is sent.
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const { app } = await start(1, `http://127.0.0.1:${closed}/v1`);
    const job = await confirmNew(app);
    expect(job).toMatchObject({ status: 'failed', error: { code: 'provider_refused' } });
    expect(await spent(app)).toBe(0);
  });
});

describe('jobs the provider made', () => {
  it('a video that expired before it could be copied is spent', async () => {
    videos.fixture.options.contentGone = true;
    videos.fixture.options.completeAfter = 1;
    const { app } = await start();
    const job = await confirmNew(app);
    const failed = await until(app, job.id, 'failed');
    expect(failed.error.code).toBe('expired');
    expect(failed.remote_id).toMatch(/^video_/);
    expect(await spent(app)).toBe(0.8);
  });
});

describe('the budget', () => {
  it('holds against a provider that answers 500 to every create it carries out', async () => {
    videos.fixture.options.createFailure = { status: 500, created: true };
    const { app } = await start(2);
    const answers: number[] = [];
    for (let attempt = 0; attempt < 6; attempt++) {
      const quote = (await quoteOf(app)).json();
      answers.push((await post(app, '/v1/media/jobs', { quote_id: quote.id, confirm: true })).statusCode);
    }
    expect(answers).toEqual([200, 200, 402, 402, 402, 402]);
    // $0.80 each: no more than $2 worth was made at the provider, and all of it is counted.
    expect(videos.fixture.videos.size * 0.8).toBeLessThanOrEqual(2);
    const jobs = (await get(app, '/v1/media/jobs')).json().data;
    for (const job of jobs) await until(app, job.id, 'completed');
    expect(await spent(app)).toBe(videos.fixture.videos.size * 0.8);
    expect((await get(app, '/v1/media/providers')).json().budget.remaining_usd).toBe(0.4);
  });
});
