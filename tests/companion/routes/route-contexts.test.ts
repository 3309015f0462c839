import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { VALIDATION } from '../../../companion/src/http/validation.js';
import { checkDocument } from '../../../companion/src/config/document.js';
import { installErrorHandling } from '../../../companion/src/http/error-handler.js';
import { EVERY_JOB } from '../../../companion/src/images/jobs/job-store.js';
import { keyRoutes } from '../../../companion/src/routes/admin/keys.js';
import type { AdminContext, MediaContext } from '../../../companion/src/routes/contexts.js';
import { mediaRoutes } from '../../../companion/src/routes/media.js';
import type { AccessKeyRecord, CreatedKey } from '#shared/api/access.js';
import type { ConfigDocument } from '#shared/api/config.js';
import type { MediaJob, MediaQuote, MediaQuoteRequest } from '#shared/api/media.js';

/*
 * A route family is built from its own small context (routes/contexts.ts), so its routes can be
 * tried with a hand-made one: no data folder, no engine, no Services. These fakes stand for the
 * domain objects; validation, the error shape and the conversion to the wire are the real ones.
 */

let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** The default configuration with some settings changed, as config.yaml would give it. */
function configWith(settings: Record<string, unknown>): ConfigDocument {
  const { document, problems } = checkDocument({ version: 1, ...settings });
  if (!document) throw new Error(problems.join('\n'));
  return document;
}

describe('the media family with a fake media service', () => {
  const quote = { id: 'quote_1', object: 'media.quote', cost_usd: 0.5 } as MediaQuote;
  const job = { id: 'media_1', object: 'media.job', status: 'queued' } as MediaJob;

  async function build(config: ConfigDocument) {
    const calls: unknown[][] = [];
    const media: MediaContext['media'] = {
      providers: () => ({ object: 'list', data: [], budget: { enabled: false, monthly_budget_usd: 0, spent_usd: 0, remaining_usd: 0, month: '2026-01' } }),
      quote: async (request, owner) => (calls.push(['quote', request, owner]), quote),
      confirm: async (request, viewer) => (calls.push(['confirm', request, viewer]), job),
      jobs: (limit, viewer) => (calls.push(['jobs', limit, viewer]), [job]),
      job: (id, viewer) => (calls.push(['job', id, viewer]), job),
      contentPath: () => '/nonexistent',
    };
    app = Fastify({ ajv: VALIDATION });
    installErrorHandling(app);
    await app.register(mediaRoutes, { config: () => config, media });
    return calls;
  }

  const asked: MediaQuoteRequest = { provider: 'video', operation: 'video.generate', prompt: 'a fox', seconds: 4, size: '1280x720' };

  it('validates a quote, hands it to the service with its owner, and answers what the service says', async () => {
    const calls = await build(configWith({}));
    const answer = await app!.inject({ method: 'POST', url: '/v1/media/quotes', payload: asked });
    expect([answer.statusCode, answer.json()]).toEqual([200, quote]);
    expect(calls).toEqual([['quote', asked, null]]);

    const refused = await app!.inject({ method: 'POST', url: '/v1/media/quotes', payload: { ...asked, seconds: '4' } });
    expect([refused.statusCode, refused.json().error]).toEqual([
      400,
      { message: 'seconds must be an integer.', type: 'invalid_request_error', code: 'invalid_request_error', param: 'seconds' },
    ]);
    expect(calls).toHaveLength(1);
  });

  it('pages jobs for every viewer when no key is presented, and refuses a limit out of range', async () => {
    const calls = await build(configWith({}));
    const listed = await app!.inject({ method: 'GET', url: '/v1/media/jobs?limit=3' });
    expect([listed.statusCode, listed.json()]).toEqual([200, { object: 'list', data: [job] }]);
    expect(calls).toEqual([['jobs', 3, EVERY_JOB]]);
    expect((await app!.inject({ method: 'GET', url: '/v1/media/jobs?limit=0' })).statusCode).toBe(400);
  });

  it('bounds a quote body by server.limits.images_body_mb of the configuration it is given', async () => {
    const calls = await build(configWith({ server: { limits: { images_body_mb: 1 } } }));
    const large = { ...asked, input_image: 'A'.repeat(1024 * 1024) };
    const answer = await app!.inject({ method: 'POST', url: '/v1/media/quotes', payload: large });
    expect([answer.statusCode, answer.json().error.code]).toEqual([413, 'request_too_large']);
    expect(calls).toEqual([]);
  });
});

describe('an admin module with only the members it picks', () => {
  it('creates a key from a lifetime in days, and refuses two expiries before the store is asked', async () => {
    const created: Parameters<AdminContext['keys']['create']>[0][] = [];
    const record: AccessKeyRecord = {
      id: 'key_1',
      label: 'phone',
      prefix: 'hk_abcd',
      agent: null,
      scopes: ['inference'],
      created_at: '2026-01-01T00:00:00.000Z',
      expires_at: null,
      last_used_at: null,
      revoked_at: null,
    };
    const keys: AdminContext['keys'] = {
      create: (options): CreatedKey => (created.push(options), { ...record, key: 'hk_abcd_secret' }),
      list: () => [record],
      revoke: () => ({ ...record, revoked_at: '2026-01-02T00:00:00.000Z' }),
    };
    app = Fastify({ ajv: VALIDATION });
    installErrorHandling(app);
    await app.register(keyRoutes, { keys });

    const before = Date.now();
    const answer = await app.inject({ method: 'POST', url: '/admin/keys', payload: { label: 'phone', expires_in_days: 2 } });
    expect([answer.statusCode, answer.headers['cache-control'], answer.json().key]).toEqual([201, 'no-store', 'hk_abcd_secret']);
    expect(created).toHaveLength(1);
    expect(created[0]!.expiresAt).toBeGreaterThanOrEqual(before + 2 * 86_400_000);
    expect(created[0]!.expiresAt).toBeLessThanOrEqual(Date.now() + 2 * 86_400_000);

    const both = await app.inject({ method: 'POST', url: '/admin/keys', payload: { label: 'x', expires_in_days: 2, expires_at: '2030-01-01T00:00:00Z' } });
    expect([both.statusCode, both.json().error.param]).toEqual([400, 'expires_in_days']);
    expect(created).toHaveLength(1);
    expect((await app.inject({ method: 'GET', url: '/admin/keys' })).json()).toEqual({ data: [record] });
  });
});
