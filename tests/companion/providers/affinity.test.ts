import type { InjectOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { ErrorBody } from '#shared/api/errors.js';
import { HearthError } from '../../../companion/src/errors.js';
import { Pool } from '../../../companion/src/providers/pool.js';
import { healthOf } from '../../../companion/src/providers/settings.js';
import { sharedApp } from '../../helpers/app.js';
import { mockProviderForTest } from '../../helpers/mock-provider.js';

/*
 * Conversation affinity holds no client text (issue 31, item 2): `user` and `prompt_cache_key`
 * are limited to OpenAI's 256 characters, a pool keeps a fixed-size digest of each key it
 * remembers, and a pool of one endpoint (every `base_url` provider) remembers nothing at all.
 */

const hearth = sharedApp({ withModel: false, resetConfig: true });
const user = [{ role: 'user', content: 'Hello' }];

const urls = ['http://a.example/v1', 'http://b.example/v1'];
const pool = (count: number) =>
  new Pool(
    'gpu',
    urls.slice(0, count).map((url) => ({ url, weight: 1, maxConcurrent: null })),
    healthOf(undefined),
    true,
  );

describe('the fields that tie a request to a conversation', () => {
  it('answer 400 naming the field when `user` or `prompt_cache_key` is longer than 256 characters, on chat completions, responses and embeddings', async () => {
    const long = 'u'.repeat(257);
    const requests: [InjectOptions, string][] = [
      [{ method: 'POST', url: '/v1/chat/completions', payload: { model: 'tiny', messages: user, user: long } }, 'user'],
      [{ method: 'POST', url: '/v1/chat/completions', payload: { model: 'tiny', messages: user, prompt_cache_key: long } }, 'prompt_cache_key'],
      [{ method: 'POST', url: '/v1/responses', payload: { model: 'tiny', input: 'Hello', user: long } }, 'user'],
      [{ method: 'POST', url: '/v1/responses', payload: { model: 'tiny', input: 'Hello', prompt_cache_key: long } }, 'prompt_cache_key'],
      [{ method: 'POST', url: '/v1/embeddings', payload: { model: 'tiny', input: 'Hello', user: long } }, 'user'],
    ];
    for (const [request, param] of requests) {
      const response = await hearth.app.inject(request);
      expect(response.statusCode, `${request.url} ${param}`).toBe(400);
      const { error } = response.json() as ErrorBody;
      expect(error).toMatchObject({ code: 'invalid_request_error', type: 'invalid_request_error', param });
      expect(error.message).toBe(`${param} must be at most 256 characters long.`);
    }
  });

  it('take 256 characters, and a plain base_url provider then remembers nothing', async () => {
    const provider = await mockProviderForTest({ models: ['m'] });
    hearth.services.reconfigure({ ...hearth.baseline, providers: [{ name: 'one', base_url: provider.baseUrl }] });
    const exact = 'k'.repeat(256);
    const response = await hearth.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { 'x-service-conversation-id': 'conv_affinity' },
      payload: { model: 'one/m', messages: user, user: exact, prompt_cache_key: exact },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(provider.requests.at(-1)!.body).toMatchObject({ user: exact, prompt_cache_key: exact });
    const [entry] = hearth.services.providers.status();
    expect(entry!.endpoints).toHaveLength(1);
    const { pool: single } = hearth.services.pools.list().find((item) => item.name === 'one')!;
    expect(single.conversations()).toBe(0);
  });
});

describe('a pool remembering conversations', () => {
  it('keeps a fixed-size digest of each key, never the key itself', () => {
    const target = pool(2);
    const huge = `user:${'x'.repeat(1_000_000)}`;
    target.remember(huge, target.endpoints[1]!);
    target.remember('conversation:a:b', target.endpoints[1]!);
    expect(target.conversations()).toBe(2);
    for (const key of target.rememberedKeys()) {
      expect(key.length).toBeLessThanOrEqual(64);
      expect(key).not.toContain('xxxx');
      expect(key).not.toContain('conversation');
    }
    // The digest still finds the conversation's endpoint (b, though a is as idle).
    const lease = target.choose([huge], new Set());
    if (lease instanceof HearthError) throw lease;
    expect(lease.endpoint).toBe(target.endpoints[1]);
  });

  it('remembers nothing with a single endpoint, and forgets when a pool shrinks to one', () => {
    const single = pool(1);
    single.remember('user:alice', single.endpoints[0]!);
    expect(single.conversations()).toBe(0);
    const shrinking = pool(2);
    shrinking.remember('user:alice', shrinking.endpoints[0]!);
    expect(shrinking.conversations()).toBe(1);
    shrinking.reconcile([{ url: urls[0]!, weight: 1, maxConcurrent: null }], healthOf(undefined), true);
    expect(shrinking.conversations()).toBe(0);
  });
});
