import { describe, expect, it } from 'vitest';
import { Emitter } from '../../../companion/src/emitter.js';
import { ProviderClient } from '../../../companion/src/providers/client.js';
import { HealthChecks } from '../../../companion/src/providers/health.js';
import { ProviderPools, type ProviderObserver } from '../../../companion/src/providers/pools.js';

/*
 * Pool and health events reach every listener (issue 33, item 3): they were single callback
 * fields (`pools.observer = metrics`, `pool.onChange`, `pool.onCircuit`, `endpoint.onMove`), so a
 * second listener silently replaced the first: metrics stopped counting, health checks stopped
 * rescheduling, the log stopped reporting downs, and no test noticed.
 */

const resolveSecret = () => undefined;
const healthy = (async () => new Response('{}')) as unknown as typeof fetch;
const target = () => ({ base: new URL('http://a.example/v1'), headers: new Headers(), secrets: [] });
const poolConfig = {
  name: 'gpu',
  endpoints: [{ url: 'http://a.example/v1' }, { url: 'http://b.example/v1' }],
  health: { failures_to_open: 1, open_seconds: 60 },
};

function recorder(): ProviderObserver & { heard: string[] } {
  const heard: string[] = [];
  return {
    heard,
    firstChunk: (model) => heard.push(`first ${model}`),
    usage: (model, prompt, completion) => heard.push(`usage ${model} ${prompt}+${completion}`),
    interrupted: (model) => heard.push(`interrupted ${model}`),
  };
}

describe('Emitter', () => {
  it('delivers an event to every listener, and stops delivering to one that was removed', () => {
    const events = new Emitter<{ ping: [number] }>();
    const heard: string[] = [];
    const offFirst = events.on('ping', (n) => heard.push(`first ${n}`));
    events.on('ping', (n) => heard.push(`second ${n}`));
    events.emit('ping', 1);
    offFirst();
    offFirst();
    events.emit('ping', 2);
    expect(heard).toEqual(['first 1', 'second 1', 'second 2']);
    expect(events.listenerCount('ping')).toBe(1);
  });

  it('a listener that throws does not keep the others from hearing; its error is thrown after', () => {
    const events = new Emitter<{ ping: [] }>();
    const heard: string[] = [];
    events.on('ping', () => {
      throw new Error('first broke');
    });
    events.on('ping', () => heard.push('second'));
    expect(() => events.emit('ping')).toThrow('first broke');
    expect(heard).toEqual(['second']);
  });
});

describe('ProviderPools events', () => {
  it('two observers of provider answers both hear the first chunk and the usage of a stream', async () => {
    const stream =
      'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}\n\ndata: [DONE]\n\n';
    const fetchImpl = (async () => new Response(stream, { headers: { 'content-type': 'text/event-stream' } })) as unknown as typeof fetch;
    const pools = new ProviderPools(resolveSecret, { fetch: fetchImpl, checks: false });
    const providers = [{ name: 'one', base_url: 'http://one.example/v1' }];
    pools.configure(providers);
    const metrics = recorder();
    const other = recorder();
    pools.observe(metrics);
    const stopOther = pools.observe(other);
    const client = new ProviderClient(providers, resolveSecret, fetchImpl, pools);
    await (await client.forward('/chat/completions', 'one/m', { stream: true, messages: [] }, new AbortController().signal)).text();
    expect(metrics.heard).toEqual(['first one/m', 'usage one/m 3+2']);
    expect(other.heard).toEqual(metrics.heard);
    stopOther();
    await (await client.forward('/chat/completions', 'one/m', { stream: true, messages: [] }, new AbortController().signal)).text();
    expect(metrics.heard).toHaveLength(4);
    expect(other.heard).toHaveLength(2);
  });

  it("a circuit opening reaches the log and every other listener of the pools and of the endpoint's pool", () => {
    const lines: string[] = [];
    const log = { warn: (text: string) => lines.push(`warn ${text}`), info: (text: string) => lines.push(`info ${text}`) };
    const pools = new ProviderPools(resolveSecret, { checks: false, log });
    pools.configure([poolConfig]);
    const pool = pools.pool(poolConfig);
    const heard: string[] = [];
    pools.events.on('circuit', (name, endpoint, to, from) => heard.push(`pools: ${name} ${endpoint.display} ${from}->${to}`));
    pool.events.on('circuit', (endpoint, to, from) => heard.push(`pool: ${endpoint.display} ${from}->${to}`));
    pool.events.on('change', () => heard.push('pool: change'));
    pool.failed(pool.endpoints[0]!, 'its model list answered with an error (500)');
    expect(heard).toEqual(['pools: gpu http://a.example/v1 closed->open', 'pool: http://a.example/v1 closed->open', 'pool: change']);
    expect(lines).toEqual([
      'warn Provider "gpu": http://a.example/v1 is down (its model list answered with an error (500)); its requests go to the other endpoints until it answers again.',
    ]);
  });

  it("health checks keep hearing their pool's changes when another listener is added, and stop hearing them when stopped", () => {
    const pools = new ProviderPools(resolveSecret, { checks: false });
    pools.configure([poolConfig]);
    const pool = pools.pool(poolConfig);
    const checks = new HealthChecks(pool, target, healthy);
    let other = 0;
    pool.events.on('change', () => other++);
    expect(pool.events.listenerCount('change')).toBe(2);
    checks.stop();
    expect(pool.events.listenerCount('change')).toBe(1);
    // A second set of checks on the same pool (checks switched off and on again) is heard beside the other listener.
    const again = new HealthChecks(pool, target, healthy);
    expect(pool.events.listenerCount('change')).toBe(2);
    pool.failed(pool.endpoints[1]!, 'down');
    expect(other).toBe(1);
    again.stop();
  });
});
