import { describe, expect, it } from 'vitest';
import { Pool } from '../../../companion/src/providers/pool.js';
import { healthOf } from '../../../companion/src/providers/settings.js';
import { classifyAttempt, learn, type Attempt, type EndpointNews } from '../../../companion/src/providers/verdict.js';

/*
 * The one classifier of a failed (or answered) attempt on a pool endpoint (issue 33, item 3):
 * what the endpoint's circuit learns and whether the request fails over or gives up. Its table,
 * row by row, with another endpoint to move to and without one.
 */

const answered = (status: number, retryAfter?: number): Attempt => ({ kind: 'answered', status, retryAfter });

const rows: [string, Attempt, EndpointNews, boolean][] = [
  ['the client aborted', { kind: 'aborted' }, { kind: 'nothing' }, false],
  ['connection refused', { kind: 'unreachable', reason: 'ECONNREFUSED' }, { kind: 'failed', reason: 'not reachable (connection refused)' }, true],
  ['host not found', { kind: 'unreachable', reason: 'ENOTFOUND' }, { kind: 'failed', reason: 'not reachable (host not found)' }, true],
  ['a timeout', { kind: 'unreachable', reason: 'no answer within 200 ms' }, { kind: 'failed', reason: 'not reachable (no answer within 200 ms)' }, true],
  ['429 with Retry-After', answered(429, 30), { kind: 'paused', seconds: 30 }, true],
  ['429 without Retry-After', answered(429), { kind: 'paused', seconds: 1 }, true],
  ['503 with Retry-After', answered(503, 5), { kind: 'paused', seconds: 5 }, true],
  ['503 without Retry-After', answered(503), { kind: 'failed', reason: 'answered with an error (503)' }, true],
  ['500', answered(500), { kind: 'failed', reason: 'answered with an error (500)' }, true],
  ['502 with Retry-After', answered(502, 5), { kind: 'failed', reason: 'answered with an error (502)' }, true],
  ['400', answered(400), { kind: 'succeeded' }, false],
  ['401', answered(401), { kind: 'succeeded' }, false],
  ['404', answered(404), { kind: 'succeeded' }, false],
  ['408', answered(408), { kind: 'succeeded' }, false],
  ['200', answered(200), { kind: 'succeeded' }, false],
  ['a stream cut off after it began', { kind: 'cut_off' }, { kind: 'failed', reason: 'a reply was cut off' }, false],
];

describe('classifyAttempt', () => {
  it.each(rows)('%s', (_name, attempt, endpoint, retryable) => {
    expect(classifyAttempt(attempt, true)).toEqual({ endpoint, retryable, action: retryable ? 'failover' : 'give_up' });
    // Without another endpoint (or for a request that stays where it is) every attempt gives up.
    expect(classifyAttempt(attempt, false)).toEqual({ endpoint, retryable, action: 'give_up' });
  });
});

describe('learn', () => {
  it("puts each kind of news into the endpoint's circuit", () => {
    let now = 1_000_000;
    const pool = new Pool('gpu', [{ url: 'http://a.example/v1', weight: 1, maxConcurrent: null }], healthOf({ failures_to_open: 2 }), true, () => now);
    const endpoint = pool.endpoints[0]!;
    learn(pool, endpoint, { kind: 'failed', reason: 'answered with an error (500)' });
    expect(endpoint).toMatchObject({ consecutiveFailures: 1, lastError: 'answered with an error (500)', circuit: 'closed' });
    learn(pool, endpoint, { kind: 'nothing' });
    expect(endpoint.consecutiveFailures).toBe(1);
    learn(pool, endpoint, { kind: 'succeeded' });
    expect(endpoint).toMatchObject({ consecutiveFailures: 0, lastError: undefined });
    learn(pool, endpoint, { kind: 'paused', seconds: 30 });
    expect(endpoint.retryAfterUntil).toBe(now + 30_000);
    now += 30_000;
    learn(pool, endpoint, { kind: 'failed', reason: 'a reply was cut off' });
    learn(pool, endpoint, { kind: 'failed', reason: 'a reply was cut off' });
    expect(endpoint.circuit).toBe('open');
  });
});
