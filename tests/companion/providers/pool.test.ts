import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HearthError } from '../../../companion/src/errors.js';
import { HealthChecks } from '../../../companion/src/providers/health.js';
import { Pool, type Endpoint, type Lease } from '../../../companion/src/providers/pool.js';
import { ProviderPools } from '../../../companion/src/providers/pools.js';
import { relayResponse, type RelayOutcome, type RelayTap } from '../../../companion/src/providers/relay.js';
import { healthOf } from '../../../companion/src/providers/settings.js';
import { retryAfterSeconds } from '../../../companion/src/providers/wire.js';
import { closedPort } from '../../helpers/mock-provider.js';

/*
 * The routing and circuit rules of a pool, on a clock the test moves; the health checks against a
 * real HTTP server; and the relay of an answer whose body breaks. The whole path with real
 * endpoints is in tests/e2e/pools.test.ts.
 */

let now = 1_000_000;
const clock = () => now;
const health = healthOf({ failures_to_open: 2, open_seconds: 1 });
const urls = ['http://a.example/v1', 'http://b.example/v1', 'http://c.example/v1'];

function pool(specs: { weight?: number; max?: number }[] = [{}, {}, {}], circuits = true): Pool {
  return new Pool(
    'gpu',
    specs.map((spec, index) => ({ url: urls[index]!, weight: spec.weight ?? 1, maxConcurrent: spec.max ?? null })),
    health,
    circuits,
    clock,
  );
}

function take(target: Pool, keys: string[] = [], tried: Set<Endpoint> = new Set()): Lease {
  const lease = target.choose(keys, tried);
  if (lease instanceof HearthError) throw lease;
  return lease;
}

const letter = (lease: Lease) => lease.endpoint.url[7];

describe('routing', () => {
  it('sends each request where the load after it is lowest for the weight: the strongest endpoint first, the others as it fills', () => {
    const target = pool([{ weight: 2 }, {}, {}]);
    const held = Array.from({ length: 8 }, () => take(target));
    // a (weight 2) takes two for the others' one
    expect(held.map(letter)).toEqual(['a', 'b', 'c', 'a', 'a', 'b', 'c', 'a']);
    for (const lease of held) lease.release();
    // One request at a time goes to the strongest endpoint, where it is answered soonest.
    for (let index = 0; index < 3; index++) {
      const lease = take(target);
      expect(letter(lease)).toBe('a');
      lease.release();
    }
  });

  it('takes turns among idle endpoints of equal weight (fewest served first)', () => {
    const target = pool();
    const turns: string[] = [];
    for (let index = 0; index < 4; index++) {
      const lease = take(target);
      turns.push(letter(lease)!);
      lease.release();
    }
    expect(turns).toEqual(['a', 'b', 'c', 'a']);
  });

  it('honours max_concurrent, and refuses with 429 when every endpoint is full', () => {
    const target = pool([{ max: 1 }, { max: 1 }]);
    const first = take(target);
    const second = take(target);
    expect([letter(first), letter(second)]).toEqual(['a', 'b']);
    const refused = target.choose([], new Set());
    expect(refused).toBeInstanceOf(HearthError);
    expect(refused).toMatchObject({ code: 'rate_limit_exceeded', retryAfter: 1 });
    first.release();
    first.release(); // once only
    expect(letter(take(target))).toBe('a');
    expect(target.endpoints[0]!.outstanding).toBe(1);
  });

  it('keeps a conversation on the endpoint that served it last while its circuit is closed, then moves it', () => {
    const target = pool();
    const busy = take(target); // a is busier now
    target.remember('conversation:x', target.endpoints[0]!);
    expect(letter(take(target, ['user:nobody', 'conversation:x']))).toBe('a');
    busy.release();
    target.failed(target.endpoints[0]!, 'down');
    target.failed(target.endpoints[0]!, 'down');
    expect(target.endpoints[0]!.circuit).toBe('open');
    expect(letter(take(target, ['conversation:x']))).not.toBe('a');
  });

  it('keeps an endpoint that answered 429 out for its Retry-After, without counting it as ill', () => {
    const target = pool([{}, {}]);
    target.rateLimited(target.endpoints[0]!, 30);
    expect(letter(take(target))).toBe('b');
    expect(target.endpoints[0]!.circuit).toBe('closed');
    expect(target.status()[0]).toMatchObject({ retry_in_seconds: 30, consecutive_failures: 0 });
    now += 30_000;
    expect(target.hasAlternative(new Set([target.endpoints[1]!]))).toBe(true);
  });

  it('never refuses a provider with a single base_url (no circuit): it is tried every time, as before pools', () => {
    const target = pool([{}], false);
    for (let index = 0; index < 5; index++) target.failed(target.endpoints[0]!, 'down');
    expect(target.endpoints[0]!.circuit).toBe('closed');
    expect(letter(take(target))).toBe('a');
  });
});

describe('the circuit', () => {
  it('opens after consecutive failures, lets one probe through when its wait is over, doubles the wait after a failed probe, and closes on success', () => {
    const target = pool([{}, {}]);
    const [a] = target.endpoints as [Endpoint, Endpoint];
    target.failed(a, 'refused');
    expect(a.circuit).toBe('closed');
    target.succeeded(a); // a success in between resets the count
    target.failed(a, 'refused');
    expect(a.circuit).toBe('closed');
    target.failed(a, 'refused');
    expect(a.circuit).toBe('open');
    expect(target.status()[0]).toMatchObject({ circuit: 'open', retry_in_seconds: 1, last_error: 'refused' });
    expect(letter(take(target))).toBe('b');

    now += 1000;
    // The wait is over: one request is the probe; a second one is not let in meanwhile.
    const probe = take(target, [], new Set([target.endpoints[1]!]));
    expect(probe).toMatchObject({ probe: true });
    expect(a.circuit).toBe('half_open');
    expect(target.choose([], new Set([target.endpoints[1]!]))).toBeInstanceOf(HearthError);
    target.failed(a, 'still refused');
    probe.release();
    expect(a.circuit).toBe('open');
    expect(a.openMs).toBe(2000);
    now += 1999;
    expect(target.probeDue(a)).toBe(false);
    now += 1;
    expect(target.probeDue(a)).toBe(true);
    expect(a.circuit).toBe('half_open');
    target.succeeded(a);
    target.endProbe(a);
    expect(a.circuit).toBe('closed');
    expect(a.transitions).toEqual({ open: 2, half_open: 2, closed: 1 });
  });

  it('refuses with 503 provider_unavailable and the time to the next probe when every endpoint is open', () => {
    const target = pool([{}, {}]);
    for (const endpoint of target.endpoints) for (let index = 0; index < 2; index++) target.failed(endpoint, 'connection refused');
    const refused = target.choose([], new Set());
    expect(refused).toMatchObject({ code: 'provider_unavailable', retryAfter: 1 });
    expect((refused as HearthError).message).toContain('connection refused');
  });

  it('keeps the state of endpoints that stay when the configuration changes', () => {
    const target = pool([{}, {}]);
    target.failed(target.endpoints[1]!, 'x');
    target.failed(target.endpoints[1]!, 'x');
    target.reconcile(
      [
        { url: urls[1]!, weight: 3, maxConcurrent: null },
        { url: urls[2]!, weight: 1, maxConcurrent: 2 },
      ],
      health,
      true,
    );
    expect(target.endpoints.map((endpoint) => [endpoint.url, endpoint.circuit, endpoint.weight])).toEqual([
      [urls[1], 'open', 3],
      [urls[2], 'closed', 1],
    ]);
  });
});

describe('Retry-After', () => {
  it('reads seconds and HTTP dates, capped at an hour', () => {
    expect(retryAfterSeconds('7')).toBe(7);
    expect(retryAfterSeconds(null)).toBeUndefined();
    expect(retryAfterSeconds('soon')).toBeUndefined();
    expect(retryAfterSeconds('999999')).toBe(3600);
    const inTen = new Date(Date.now() + 10_000).toUTCString();
    expect(retryAfterSeconds(inTen)).toBeGreaterThanOrEqual(9);
    expect(retryAfterSeconds(inTen)).toBeLessThanOrEqual(11);
  });
});

describe('health checks against a real server', () => {
  let server: Server;
  let base: string;
  const asked: string[] = [];
  let modelsStatus = 200;

  beforeAll(async () => {
    server = createServer((request, response) => {
      asked.push(request.url!);
      if (request.url === '/v1/models') response.writeHead(modelsStatus, { 'content-type': 'application/json' }).end('{"data":[]}');
      else if (request.url === '/ready') response.writeHead(200).end('ok');
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const checker = (target: Pool) => new HealthChecks(target, () => ({ base: new URL(base), headers: new Headers(), secrets: [] }), fetch);

  it('uses GET {url}/models where the server has no /health, and opens the circuit when it fails', async () => {
    const target = new Pool('p', [{ url: base, weight: 1, maxConcurrent: null }], healthOf({ failures_to_open: 2, interval_seconds: 3600 }), true);
    const checks = checker(target);
    try {
      asked.length = 0;
      await checks.check(target.endpoints[0]!);
      expect(asked).toEqual(['/health', '/v1/models']);
      expect(target.endpoints[0]!.circuit).toBe('closed');
      await checks.check(target.endpoints[0]!);
      expect(asked.slice(2)).toEqual(['/v1/models']); // remembered: no second /health
      modelsStatus = 500;
      await checks.check(target.endpoints[0]!);
      await checks.check(target.endpoints[0]!);
      expect(target.status()[0]).toMatchObject({ circuit: 'open', last_error: 'its model list answered with an error (500)' });
    } finally {
      checks.stop();
      modelsStatus = 200;
    }
  });

  it('asks the configured path, and says why an endpoint that does not answer failed', async () => {
    const target = new Pool('p', [{ url: base, weight: 1, maxConcurrent: null }], healthOf({ path: '/ready', interval_seconds: 3600 }), true);
    const checks = checker(target);
    try {
      asked.length = 0;
      await checks.check(target.endpoints[0]!);
      expect(asked).toEqual(['/ready']);
      expect(target.endpoints[0]!.consecutiveFailures).toBe(0);
    } finally {
      checks.stop();
    }
    const nobody = `http://127.0.0.1:${await closedPort()}/v1`;
    const closed = new Pool('q', [{ url: nobody, weight: 1, maxConcurrent: null }], healthOf({ interval_seconds: 3600 }), true);
    const refused = new HealthChecks(closed, () => ({ base: new URL(nobody), headers: new Headers(), secrets: [] }), fetch);
    try {
      await refused.check(closed.endpoints[0]!);
      expect(closed.status()[0]!.last_error).toBe('not reachable (connection refused)');
    } finally {
      refused.stop();
    }
  });

  it('checks a new endpoint at once, and logs an endpoint going down and coming back once each (not each failed probe)', async () => {
    const lines: { level: string; text: string }[] = [];
    const log = {
      warn: (text: object | string) => void lines.push({ level: 'warn', text: String(text) }),
      info: (text: object | string) => void lines.push({ level: 'info', text: String(text) }),
    };
    const pools = new ProviderPools(() => undefined, { log });
    try {
      asked.length = 0;
      pools.configure([{ name: 'gpu', endpoints: [{ url: base }], health: { failures_to_open: 1, open_seconds: 1, interval_seconds: 3600 } }]);
      // Checked at once, not after the hour-long interval; checkNow joins the check in flight.
      await vi.waitFor(() => expect(asked).toContain('/health'), { timeout: 30_000, interval: 20 });
      await pools.checkNow('gpu');
      expect(asked.slice(0, 2)).toEqual(['/health', '/v1/models']);
      const endpoint = pools.list()[0]!.pool.endpoints[0]!;
      expect(lines).toEqual([]);
      modelsStatus = 500;
      await pools.checkNow('gpu');
      expect(endpoint.circuit).toBe('open');
      // A failed probe keeps it open without another line.
      endpoint.openUntil = 0;
      await pools.checkNow('gpu');
      expect(endpoint.transitions).toMatchObject({ open: 2, half_open: 1 });
      modelsStatus = 200;
      endpoint.openUntil = 0;
      await pools.checkNow('gpu');
      expect(endpoint.circuit).toBe('closed');
      const shown = endpoint.display;
      expect(lines).toEqual([
        {
          level: 'warn',
          text: `Provider "gpu": ${shown} is down (its model list answered with an error (500)); its requests go to the other endpoints until it answers again.`,
        },
        { level: 'info', text: `Provider "gpu": ${shown} answers again.` },
      ]);
    } finally {
      pools.close();
      modelsStatus = 200;
    }
  });
});

describe('the relay of an answer whose body breaks', () => {
  function broken(pieces: string[], type: string): Response {
    let index = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (index < pieces.length) controller.enqueue(new TextEncoder().encode(pieces[index++]));
        else controller.error(new TypeError('terminated'));
      },
    });
    return new Response(body, { headers: { 'content-type': type } });
  }

  async function relay(response: Response, responses = false): Promise<{ text: string; outcome?: RelayOutcome; tap?: RelayTap }> {
    const seen: { outcome?: RelayOutcome; tap?: RelayTap } = {};
    const relayed = relayResponse(response, {
      responses,
      interrupted: () => new HearthError('provider_interrupted', 'It broke.'),
      clientGone: () => false,
      onSettle: (outcome, tap) => Object.assign(seen, { outcome, tap }),
    });
    return { text: await relayed.text(), ...seen };
  }

  it('holds back half a line and ends a chat stream with one error event on an event boundary', async () => {
    const { text, outcome, tap } = await relay(
      broken(['data: {"choices":[]}\n\ndata: {"usage":{"prompt_tokens":3,"completion_tokens":2}}\n\ndata: {"cho', 'ices":[{"de'], 'text/event-stream'),
    );
    expect(text).toBe(
      'data: {"choices":[]}\n\ndata: {"usage":{"prompt_tokens":3,"completion_tokens":2}}\n\n' +
        'data: {"error":{"message":"It broke.","type":"server_error","code":"provider_interrupted","param":null}}\n\n',
    );
    expect(outcome).toBe('broken');
    expect(tap).toMatchObject({ promptTokens: 3, completionTokens: 2 });
  });

  it("ends a Responses stream with the protocol's error event, numbered after the last one", async () => {
    const created = 'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1"}}\n\n';
    const delta = 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":1,"delta":"hi"}\n';
    const { text, tap } = await relay(broken([created, delta], 'text/event-stream'), true);
    expect(text).toBe(
      `${created}${delta}\nevent: error\ndata: {"type":"error","code":"provider_interrupted","message":"It broke.","param":null,"sequence_number":2}\n\n`,
    );
    expect(tap).toMatchObject({ responseId: 'resp_1' });
  });

  it('fails a JSON answer that breaks with provider_interrupted', async () => {
    await expect(relay(broken(['{"id":"chatcmpl-1",'], 'application/json'))).rejects.toMatchObject({ code: 'provider_interrupted' });
  });
});
