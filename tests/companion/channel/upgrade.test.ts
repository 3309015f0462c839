import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { testApp } from '../../helpers/app.js';
import { newDataDir } from '../../helpers/server.js';

/*
 * The upgrade rule on the plain-HTTP listener: agent routes are protected remote routes. A peer
 * that is not on this machine (Fastify inject with a remote address) gets 426 Upgrade Required
 * with `Upgrade: TLS/1.3` and an OpenAI-shaped error naming the secure channel's port.
 */

let harness: Awaited<ReturnType<typeof testApp>>;

beforeAll(async () => {
  const dataDir = await newDataDir(false);
  writeFileSync(join(dataDir, 'config.yaml'), stringify({ version: 1, agents: [{ id: 'helper' }] }));
  harness = await testApp({ dataDir });
});

afterAll(async () => harness?.close());

const remote = { remoteAddress: '203.0.113.7', headers: { host: '127.0.0.1:4777' } };

describe('426 Upgrade Required', () => {
  it('GET /agents and POST /agents/{id}/run from another machine get 426 naming the secure channel', async () => {
    for (const request of [
      { method: 'GET' as const, url: '/agents' },
      { method: 'POST' as const, url: '/agents/helper/run', payload: { input: 'hi' } },
      { method: 'GET' as const, url: '/agents/runs/run_x' },
    ]) {
      const answer = await harness.app.inject({ ...request, ...remote });
      expect(answer.statusCode, request.url).toBe(426);
      expect(answer.headers.upgrade).toBe('TLS/1.3');
      expect(answer.headers.connection).toMatch(/upgrade/i);
      const body = answer.json();
      expect(body.error).toMatchObject({ code: 'upgrade_required', type: 'invalid_request_error', param: null });
      expect(body.error.message).toMatch(/secure channel, which is off on this host: set server\.remote\.enabled/);
    }
  });

  it('names the TLS port when the channel listens', async () => {
    harness.services.channel.listening({ host: '0.0.0.0', port: 4778 });
    try {
      const answer = await harness.app.inject({ method: 'GET', url: '/agents', ...remote });
      expect(answer.statusCode).toBe(426);
      expect(answer.json().error.message).toMatch(/TLS 1\.3 on port 4778/);
    } finally {
      harness.services.channel.listening(undefined);
    }
  });

  it('no key lifts it, and a proxy in between does not count as this machine', async () => {
    const keyed = await harness.app.inject({ method: 'GET', url: '/agents', ...remote, headers: { ...remote.headers, authorization: 'Bearer hth_anything' } });
    expect(keyed.statusCode).toBe(426);
    const proxied = await harness.app.inject({
      method: 'GET',
      url: '/agents',
      remoteAddress: '127.0.0.1',
      headers: { host: '127.0.0.1:4777', 'x-forwarded-for': '203.0.113.7' },
    });
    expect(proxied.statusCode).toBe(426);
  });

  it('callers on this machine, and other route families from elsewhere, are not affected', async () => {
    const local = await harness.app.inject({ method: 'GET', url: '/agents', remoteAddress: '127.0.0.1', headers: { host: '127.0.0.1:4777' } });
    expect(local.statusCode).toBe(200);
    const health = await harness.app.inject({ method: 'GET', url: '/health', ...remote });
    expect(health.statusCode).not.toBe(426);
    const models = await harness.app.inject({ method: 'GET', url: '/v1/models', ...remote });
    expect(models.statusCode).not.toBe(426);
  });
});
