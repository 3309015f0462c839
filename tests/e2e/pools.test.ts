import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderEndpointStatus, ServerStatus } from '#shared/api/admin.js';
import { parsePrometheus, sampleValue } from '../helpers/prometheus.js';
import { newDataDir, startServer, type RunningServer } from '../helpers/server.js';
import { sseData } from '../helpers/streams.js';

/*
 * Provider pools with real parts: three `hearth serve` processes on 127.0.0.1 serve the tiny model
 * as the endpoints of one pool behind a fourth, which is what the tests talk to. Which endpoint
 * served what is read from each endpoint's own GET /metrics (its requests for the model `tiny`),
 * so nothing here trusts the front's own account of its routing. A small fixture server stands in
 * for an endpoint that answers 429 with Retry-After. Nothing waits on the clock: every wait is a
 * poll with a generous limit, and the checks are about where requests went.
 */

interface Endpoint {
  server: RunningServer;
  port: number;
  dataDir: string;
}

const endpoints: Endpoint[] = [];
let front: RunningServer;
let limiter: Server;
let limiterChats = 0;

async function startEndpoint(dataDir?: string, port = 0): Promise<Endpoint> {
  const dir = dataDir ?? (await newDataDir());
  const server = await startServer({ dataDir: dir, args: port ? ['--port', String(port)] : [] });
  return { server, port: Number(new URL(server.url).port), dataDir: dir };
}

/** Requests for the model `tiny` an endpoint has answered, by its own metrics. */
async function served(endpoint: Endpoint): Promise<number> {
  const families = parsePrometheus(await (await fetch(`${endpoint.server.url}/metrics`)).text());
  const family = families.get('hearth_requests_total');
  return (family?.samples ?? [])
    .filter((sample) => sample.labels.family === 'inference' && sample.labels.model === 'tiny')
    .reduce((sum, sample) => sum + sample.value, 0);
}

async function servedAll(): Promise<number[]> {
  return Promise.all(endpoints.map(served));
}

async function delta(work: () => Promise<unknown>): Promise<number[]> {
  const before = await servedAll();
  await work();
  const after = await servedAll();
  return after.map((count, index) => count - before[index]!);
}

async function frontMetrics() {
  return parsePrometheus(await (await fetch(`${front.url}/metrics`)).text());
}

async function poolStatus(name = 'pool'): Promise<ProviderEndpointStatus[]> {
  const status = (await (await fetch(`${front.url}/admin/status`)).json()) as ServerStatus;
  return status.providers.find((provider) => provider.name === name)!.endpoints;
}

function chat(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${front.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'pool/tiny', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 4, ...body }),
  });
}

async function ok(response: Promise<Response>): Promise<Record<string, unknown>> {
  const answer = await response;
  const text = await answer.text();
  expect(answer.status, text).toBe(200);
  return text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** Loads the model on an endpoint (its first request does), so every later request there is alike. */
function warmUp(endpoint: Endpoint): Promise<Record<string, unknown>> {
  return ok(
    fetch(`${endpoint.server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'warm up' }], max_tokens: 1 }),
    }),
  );
}

beforeAll(async () => {
  // Three independent starts, overlapped, each followed by its model load. All before the front
  // starts: a process busy loading could miss the front's health checks, and be left out of the
  // first test; no front runs yet to check them, so the three load at once.
  const warmEndpoint = async () => {
    const endpoint = await startEndpoint();
    await warmUp(endpoint);
    return endpoint;
  };
  endpoints.push(...(await Promise.all([warmEndpoint(), warmEndpoint(), warmEndpoint()])));
  limiter = createServer((request, response) => {
    if (request.url === '/v1/models') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'tiny', object: 'model' }] }));
      return;
    }
    if (request.method === 'POST' && request.url === '/v1/chat/completions') {
      limiterChats++;
      request.resume();
      response
        .writeHead(429, { 'content-type': 'application/json', 'retry-after': '120' })
        .end(JSON.stringify({ error: { message: 'Rate limit reached.', type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null } }));
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => limiter.listen(0, '127.0.0.1', resolve));
  const limiterPort = (limiter.address() as AddressInfo).port;
  const frontDir = await newDataDir(false);
  const url = (endpoint: Endpoint) => `http://127.0.0.1:${endpoint.port}/v1`;
  writeFileSync(
    join(frontDir, 'config.yaml'),
    [
      'version: 1',
      'providers:',
      '  - name: pool',
      '    endpoints:',
      ...endpoints.map((endpoint) => `      - url: ${url(endpoint)}`),
      '    models: [tiny]',
      '    health: { interval_seconds: 0.5, failures_to_open: 2, open_seconds: 0.5 }',
      '  - name: limited',
      '    endpoints:',
      `      - url: http://127.0.0.1:${limiterPort}/v1`,
      `      - url: ${url(endpoints[0]!)}`,
      '    models: [tiny]',
      // A passing check ends a Retry-After pause; none comes while the 429 test looks at it.
      '    health: { interval_seconds: 3600 }',
      'agents:',
      '  - id: pooled',
      '    model: pool/tiny',
      '    max_tokens: 4',
      '',
    ].join('\n'),
  );
  front = await startServer({ dataDir: frontDir, withModel: false });
});

afterAll(async () => {
  await Promise.all([front?.stop(), ...endpoints.map((endpoint) => endpoint.server.stop())]);
  await new Promise((resolve) => limiter?.close(resolve));
});

describe('a provider pool of three hearth serve processes', () => {
  it('spreads requests by load: concurrent requests go to the endpoints with the fewest in flight', async () => {
    // Six at once, each long enough to be in flight while the others are routed: two per endpoint.
    const spread = await delta(() => Promise.all(Array.from({ length: 6 }, () => ok(chat({ max_tokens: 400 })))));
    expect(spread).toEqual([2, 2, 2]);
    // One at a time, an idle pool still takes turns (fewest served breaks the tie).
    const turns = await delta(async () => {
      for (let index = 0; index < 3; index++) await ok(chat({}));
    });
    expect(turns).toEqual([1, 1, 1]);
  });

  it('keeps a conversation on its endpoint: X-Service-Conversation-Id, user, a Responses chain and an agent conversation', async () => {
    const byHeader = await delta(async () => {
      await ok(chat({}, { 'x-service-conversation-id': 'conv-a' }));
      // Three at once would be spread over the three endpoints; the conversation keeps them together.
      await Promise.all(Array.from({ length: 3 }, () => ok(chat({ max_tokens: 200 }, { 'x-service-conversation-id': 'conv-a' }))));
    });
    expect(byHeader.sort()).toEqual([0, 0, 4]);

    const byUser = await delta(() =>
      Promise.all([ok(chat({ user: 'u-1' }))]).then(() => Promise.all(Array.from({ length: 3 }, () => ok(chat({ user: 'u-1', max_tokens: 200 }))))),
    );
    expect(byUser.sort()).toEqual([0, 0, 4]);

    // Each endpoint stores its own responses: a chain continued elsewhere would be 404 response_not_found.
    const chain = await delta(async () => {
      let previous: string | undefined;
      for (let turn = 0; turn < 4; turn++) {
        const response = await fetch(`${front.url}/v1/responses`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'pool/tiny', input: `turn ${turn}`, max_output_tokens: 4, ...(previous ? { previous_response_id: previous } : {}) }),
        });
        const body = (await response.json()) as { id: string };
        expect(response.status, JSON.stringify(body)).toBe(200);
        previous = body.id;
      }
    });
    expect(chain.sort()).toEqual([0, 0, 4]);

    const agent = await delta(async () => {
      for (let turn = 0; turn < 3; turn++) {
        const response = await fetch(`${front.url}/agents/pooled/run`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ input: `turn ${turn}`, conversation_id: 'agent-conv' }),
        });
        const run = (await response.json()) as { status: string };
        expect(run.status, JSON.stringify(run)).toBe('completed');
      }
    });
    expect(agent.sort()).toEqual([0, 0, 3]);
  });

  it('moves a request answered 429 to another endpoint, and keeps the endpoint out for its Retry-After', async () => {
    const before = sampleValue(await frontMetrics(), 'hearth_provider_endpoint_failovers_total', {
      provider: 'limited',
      endpoint: `http://127.0.0.1:${(limiter.address() as AddressInfo).port}/v1`,
    });
    await ok(chat({ model: 'limited/tiny' }));
    expect(limiterChats).toBe(1);
    // The next request does not try it again: it asked for 120 s.
    await ok(chat({ model: 'limited/tiny' }));
    expect(limiterChats).toBe(1);
    const status = await poolStatus('limited');
    expect(status[0]).toMatchObject({ circuit: 'closed', failovers: 1 });
    expect(status[0]!.retry_in_seconds).toBeGreaterThan(60);
    const after = sampleValue(await frontMetrics(), 'hearth_provider_endpoint_failovers_total', {
      provider: 'limited',
      endpoint: `http://127.0.0.1:${(limiter.address() as AddressInfo).port}/v1`,
    });
    expect(after).toBe((before ?? 0) + 1);
  });

  it('ends an in-flight stream with a clear error when its endpoint dies, sends new requests elsewhere, opens the circuit, and half-opens it when the endpoint returns', async () => {
    // Find the endpoint a conversation is on, then stream on it and kill it mid-reply.
    const placed = await delta(() => ok(chat({}, { 'x-service-conversation-id': 'doomed' })));
    const victim = placed.indexOf(1);
    expect(victim).toBeGreaterThanOrEqual(0);
    const stream = await chat({ stream: true, max_tokens: 100_000 }, { 'x-service-conversation-id': 'doomed' });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let text = '';
    while (!text.includes('"content":"') || text.split('data:').length < 4) text += new TextDecoder().decode((await reader.read()).value);
    endpoints[victim]!.server.process.kill('SIGKILL');
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const last = sseData(text).at(-1);
    expect(last).toMatchObject({ error: { code: 'provider_interrupted', type: 'server_error', param: null } });
    expect((last as { error: { message: string } }).error.message).toMatch(/stopped answering after its reply had begun/);
    expect(sseData(text)).not.toContain('[DONE]');

    // New requests (the same conversation too) are answered by the others.
    for (let index = 0; index < 4; index++) await ok(chat({}, index % 2 ? { 'x-service-conversation-id': 'doomed' } : {}));
    await expect.poll(async () => (await poolStatus())[victim]!.circuit, { timeout: 60_000, interval: 200 }).toBe('open');
    const down = await frontMetrics();
    const label = { provider: 'pool', endpoint: `http://127.0.0.1:${endpoints[victim]!.port}/v1` };
    expect(sampleValue(down, 'hearth_provider_endpoint_up', label)).toBe(0);
    expect(sampleValue(down, 'hearth_provider_interruptions_total', { model: 'pool/tiny' })).toBe(1);
    expect(sampleValue(down, 'hearth_provider_endpoint_circuit_transitions_total', { ...label, to: 'open' })).toBeGreaterThanOrEqual(1);

    // Back on the same port: a probe half-opens the circuit and closes it again.
    endpoints[victim] = await startEndpoint(endpoints[victim]!.dataDir, endpoints[victim]!.port);
    await expect.poll(async () => (await poolStatus())[victim]!.circuit, { timeout: 90_000, interval: 200 }).toBe('closed');
    const up = await frontMetrics();
    expect(sampleValue(up, 'hearth_provider_endpoint_up', label)).toBe(1);
    expect(sampleValue(up, 'hearth_provider_endpoint_circuit_transitions_total', { ...label, to: 'half_open' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(up, 'hearth_provider_endpoint_circuit_transitions_total', { ...label, to: 'closed' })).toBeGreaterThanOrEqual(1);
    // It takes its share of the load again.
    await warmUp(endpoints[victim]!);
    const spread = await delta(() => Promise.all(Array.from({ length: 6 }, () => ok(chat({ max_tokens: 400 })))));
    expect(spread[victim]).toBeGreaterThan(0);
  });

  it('reports metrics in the Prometheus text format, and its counters move with the traffic', async () => {
    const before = await frontMetrics();
    const requests = (families: typeof before) =>
      sampleValue(families, 'hearth_requests_total', { family: 'inference', model: 'pool/tiny', status: '200' }) ?? 0;
    const generated = (families: typeof before) => sampleValue(families, 'hearth_generated_tokens_total', { model: 'pool/tiny' }) ?? 0;
    const answer = await fetch(`${front.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'pool/tiny',
        messages: [{ role: 'user', content: 'count me' }],
        max_tokens: 7,
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    const usage = sseData(await answer.text()).find((event) => (event as { usage?: unknown }).usage) as {
      usage: { completion_tokens: number; prompt_tokens: number };
    };
    const after = await frontMetrics();
    expect(requests(after)).toBe(requests(before) + 1);
    expect(generated(after)).toBe(generated(before) + usage.usage.completion_tokens);
    expect(after.get('hearth_first_token_seconds')!.type).toBe('histogram');
    expect(sampleValue(after, 'hearth_first_token_seconds_count', { model: 'pool/tiny' })).toBe(
      (sampleValue(before, 'hearth_first_token_seconds_count', { model: 'pool/tiny' }) ?? 0) + 1,
    );
    for (const index of [0, 1, 2])
      expect(sampleValue(after, 'hearth_provider_endpoint_outstanding', { provider: 'pool', endpoint: `http://127.0.0.1:${endpoints[index]!.port}/v1` })).toBe(
        0,
      );
    expect(sampleValue(after, 'hearth_agent_runs', { state: 'completed' })).toBe(3);

    // An endpoint counts its own local model: its load, its tokens, its sequences.
    const own = parsePrometheus(await (await fetch(`${endpoints[1]!.server.url}/metrics`)).text());
    expect(sampleValue(own, 'hearth_model_loads_total', { model: 'tiny', outcome: 'ready' })).toBe(1);
    expect(sampleValue(own, 'hearth_generated_tokens_total', { model: 'tiny' })).toBeGreaterThan(0);
    expect(sampleValue(own, 'hearth_model_sequences', { model: 'tiny' })).toBeGreaterThan(0);
    expect(sampleValue(own, 'hearth_model_sequences_busy', { model: 'tiny' })).toBe(0);
    // The Server screen's figures are the same numbers.
    const status = (await (await fetch(`${endpoints[1]!.server.url}/admin/status`)).json()) as ServerStatus;
    expect(sampleValue(own, 'hearth_generated_tokens_total', { model: 'tiny' })).toBe(status.loaded[0]!.generated_tokens);
    expect(sampleValue(own, 'hearth_memory_budget_bytes')).toBe(status.memory_budget_bytes);
  });
});
