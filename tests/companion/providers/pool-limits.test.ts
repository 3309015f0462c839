import { describe, expect, it } from 'vitest';
import { checkDocument } from '../../../companion/src/config/document.js';
import { HealthChecks } from '../../../companion/src/providers/health.js';
import { Pool } from '../../../companion/src/providers/pool.js';
import { healthOf } from '../../../companion/src/providers/settings.js';

/*
 * What one answer or one setting may do to a pool (issue 31, items 10 and 11): a health path is a
 * path on the endpoint's own origin, so the pool's key never goes to another host; and one 429
 * with a long Retry-After keeps an endpoint out for at most five minutes, until a passing check.
 */

const BASE = 'http://gpu.example:8000/v1';
const KEY = 'pool-key-0123456789';

function pool(path?: string): Pool {
  return new Pool(
    'gpu',
    [
      { url: BASE, weight: 1, maxConcurrent: null },
      { url: 'http://gpu2.example:8000/v1', weight: 1, maxConcurrent: null },
    ],
    healthOf({ interval_seconds: 3600, ...(path ? { path } : {}) }),
    true,
  );
}

/** Health checks whose requests are recorded (URL and whether the key went along) and answered 200. */
function recorded(target: Pool) {
  const asked: { url: string; key: boolean }[] = [];
  const fetchImpl = (async (input: URL | string, init: RequestInit = {}) => {
    asked.push({ url: String(input), key: new Headers(init.headers).get('authorization') === `Bearer ${KEY}` });
    return new Response('ok');
  }) as typeof fetch;
  const checks = new HealthChecks(
    target,
    (endpoint) => ({ base: new URL(endpoint.url), headers: new Headers({ authorization: `Bearer ${KEY}` }), secrets: [KEY] }),
    fetchImpl,
  );
  return { asked, checks };
}

describe('a health path', () => {
  it('is refused by the configuration when it could name another host', () => {
    for (const path of ['//other-host/x', '/\\other-host/x', 'health']) {
      const { problems } = checkDocument({ version: 1, providers: [{ name: 'gpu', endpoints: [{ url: BASE }], health: { path } }] });
      expect(problems.join('\n'), path).toContain('providers[0].health.path');
    }
    expect(checkDocument({ version: 1, providers: [{ name: 'gpu', endpoints: [{ url: BASE }], health: { path: '/health/ready' } }] }).problems).toEqual([]);
  });

  it('never sends the key to another origin, even when it got past the configuration', async () => {
    for (const path of ['//other-host/x', '/\\other-host/x']) {
      const target = pool(path);
      const { asked, checks } = recorded(target);
      try {
        await checks.check(target.endpoints[0]!);
      } finally {
        checks.stop();
      }
      expect(
        asked.filter((request) => !request.url.startsWith('http://gpu.example:8000/')),
        path,
      ).toEqual([]);
      expect(target.endpoints[0]!.lastError, path).toContain('health.path');
    }
    const target = pool('/ready');
    const { asked, checks } = recorded(target);
    await checks.check(target.endpoints[0]!);
    checks.stop();
    expect(asked).toEqual([{ url: 'http://gpu.example:8000/ready', key: true }]);
  });
});

describe('a Retry-After', () => {
  it('keeps an endpoint out for at most 5 minutes, however long it asked for', () => {
    const target = pool();
    target.rateLimited(target.endpoints[0]!, 3600);
    expect(target.status()[0]!.retry_in_seconds).toBe(300);
  });

  it('is forgotten when the endpoint passes a health check', async () => {
    const target = pool();
    const { checks } = recorded(target);
    target.rateLimited(target.endpoints[0]!, 30);
    expect(target.status()[0]!.retry_in_seconds).toBe(30);
    await checks.check(target.endpoints[0]!);
    checks.stop();
    expect(target.status()[0]!.retry_in_seconds).toBeUndefined();
    expect(target.hasAlternative(new Set([target.endpoints[1]!]))).toBe(true);
  });
});
