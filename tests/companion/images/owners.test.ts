/**
 * Image jobs belong to the access key that asked for them: another key with the `images` scope
 * can neither see, cancel, delete nor download them (404, as for an unknown job); a request
 * without a key (the app while auth is off) sees every job.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp } from '../../helpers/app.js';
import { imageDataDir, SLOW_UNET } from '../../helpers/images.js';
import { until } from '../../helpers/until.js';

let running: Awaited<ReturnType<typeof testApp>>;
let alice: string;
let bob: string;

beforeAll(async () => {
  running = await testApp({ dataDir: imageDataDir({ quick: { scheduler: 'EulerDiscreteScheduler' }, slow: SLOW_UNET }) });
  alice = running.services.keys.create({ label: 'alice', scopes: ['images'] }).key;
  bob = running.services.keys.create({ label: 'bob', scopes: ['images'] }).key;
});
afterAll(async () => {
  await running?.close();
});

const as = (key: string | null) => (key ? { authorization: `Bearer ${key}` } : {});
const call = (key: string | null, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
  running.app.inject({ method, url, headers: as(key), ...(payload ? { payload } : {}) });
const ids = async (key: string | null) => (await call(key, 'GET', '/v1/images/jobs')).json().data.map((job: { id: string }) => job.id);

describe('image jobs and their keys', () => {
  it("keeps each key's jobs to itself; no key sees them all", async () => {
    const made = await call(alice, 'POST', '/v1/images/generations', { model: 'quick', prompt: 'alice’s cat' });
    expect(made.statusCode).toBe(200);
    const id = made.json().job_id;
    const theirs = (await call(bob, 'POST', '/v1/images/generations', { model: 'quick', prompt: 'bob’s dog' })).json().job_id;

    expect(await ids(alice)).toContain(id);
    expect(await ids(alice)).not.toContain(theirs);
    expect(await ids(bob)).toEqual([theirs]);
    expect(await ids(null)).toEqual(expect.arrayContaining([id, theirs]));

    for (const [method, url, payload] of [
      ['GET', `/v1/images/jobs/${id}`],
      ['GET', `/v1/images/files/${id}/0.png`],
      ['POST', '/v1/images/cancel', { job_id: id }],
      ['DELETE', `/v1/images/jobs/${id}`],
    ] as const) {
      const refused = await call(bob, method, url, payload);
      expect([method, url, refused.statusCode, refused.json().error.code]).toEqual([method, url, 404, 'job_not_found']);
    }
    expect((await call(alice, 'GET', `/v1/images/files/${id}/0.png`)).headers['content-type']).toBe('image/png');
    expect((await call(null, 'GET', `/v1/images/jobs/${id}`)).json().status).toBe('completed');
    expect((await call(alice, 'DELETE', `/v1/images/jobs/${id}`)).json()).toMatchObject({ id, deleted: true });
    expect((await call(null, 'DELETE', `/v1/images/jobs/${theirs}`)).json()).toMatchObject({ id: theirs, deleted: true });
  });

  it('lets no other key cancel a running job; its own key and the app can', async () => {
    const pending = call(alice, 'POST', '/v1/images/generations', { model: 'slow', prompt: 'a long fire', size: '256x256', steps: 150 });
    const id = await until(async () => (await call(alice, 'GET', '/v1/images/jobs?status=generating')).json().data[0]?.id as string | undefined, "alice's job");
    const refused = await call(bob, 'POST', '/v1/images/cancel', { job_id: id });
    expect([refused.statusCode, refused.json().error.code]).toEqual([404, 'job_not_found']);
    expect((await call(alice, 'GET', `/v1/images/jobs/${id}`)).json()).toMatchObject({ status: 'generating', cancel_requested: false });
    expect((await call(alice, 'POST', '/v1/images/cancel', { job_id: id })).json().cancel_requested).toBe(true);
    expect((await pending).json().error.code).toBe('job_cancelled');

    const second = call(bob, 'POST', '/v1/images/generations', { model: 'slow', prompt: 'another long fire', size: '256x256', steps: 150 });
    const other = await until(async () => (await call(bob, 'GET', '/v1/images/jobs?status=generating')).json().data[0]?.id as string | undefined, "bob's job");
    expect((await call(null, 'POST', '/v1/images/cancel', { job_id: other })).json().cancel_requested).toBe(true);
    expect((await second).json().error.code).toBe('job_cancelled');
  });
});
