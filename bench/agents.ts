/**
 * `npm run bench:agents -- [--steps N] [--rounds N] [--approvals N] [--burst N]`
 *
 * The agent run loop's overhead per step, against the same model calls made directly, and the
 * approval round trip. Then one model reply asking for `burst` tool calls at once (the run's
 * time, and the longest event-loop stall while it runs), and the replay of that run's events
 * (about two per call) to a client that follows it: the longest stall of the event loop while
 * the replay is written. The model is the scripted OpenAI-compatible provider on loopback (its
 * answers take no time, so what is measured is Hearth's own work: the loop, persisting steps
 * and events, the tool call). Both sides run in this process, one after the other, each round.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import type { AgentRun } from '#shared/api/agents.js';
import { buildApp } from '../companion/src/app.js';
import { silentLogger } from '../companion/src/logger.js';
import { createServices, type Services } from '../companion/src/services.js';
import { startScriptedProvider, type ScriptedProvider } from '../tests/fixtures/scripted-provider.js';

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '5' },
    approvals: { type: 'string', default: '30' },
    burst: { type: 'string', default: '5000' },
  },
});
const steps = Number(values.steps);
const rounds = Number(values.rounds);
const approvals = Number(values.approvals);
const burst = Number(values.burst);

const provider: ScriptedProvider = await startScriptedProvider();
const dataDir = mkdtempSync(join(tmpdir(), 'hearth-agents-bench-'));
const agent = { model: 'script/scripted', memory: { enabled: false }, tools: ['current_time'], max_steps: 120 };
writeFileSync(
  join(dataDir, 'config.yaml'),
  JSON.stringify({
    version: 1,
    models: { external_sources: false },
    providers: [{ name: 'script', base_url: provider.baseUrl, models: ['scripted'] }],
    agents: [
      { id: 'bench', ...agent },
      { id: 'asker', ...agent, tool_overrides: { current_time: 'ask' } },
    ],
  }),
);
const services: Services = await createServices({ dataDir, externalSources: false, log: silentLogger, version: 'bench' });
const app: FastifyInstance = await buildApp({ services, webRoot: '/nonexistent' });
const url = await app.listen({ host: '127.0.0.1', port: 0 });

/** `steps` model calls: steps - 1 tool calls, then the answer. */
const script = () =>
  provider.setScript((_body, index) => (index < steps - 1 ? { tool_calls: [{ name: 'current_time', arguments: {} }] } : { content: 'done' }));

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/** One agent run through Hearth's HTTP API; returns its wall time and the provider requests it made. */
async function viaHearth(): Promise<{ ms: number; bodies: unknown[] }> {
  script();
  const before = provider.requests.length;
  const started = performance.now();
  const run = (await (await post('/agents/bench/run', { input: 'tick' })).json()) as AgentRun;
  const ms = performance.now() - started;
  if (run.status !== 'completed' || run.steps.length !== steps) throw new Error(`the run ended ${run.status} after ${run.steps.length} steps`);
  return { ms, bodies: provider.requests.slice(before).map((request) => request.body) };
}

/** The same model calls, the same bodies, straight to the provider, streamed and read to the end. */
async function direct(bodies: unknown[]): Promise<number> {
  script();
  const started = performance.now();
  for (const body of bodies) {
    const response = await fetch(`${provider.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await response.text();
  }
  return performance.now() - started;
}

/** Time from the approval_required event reaching the client to the tool_call.completed event after approving. */
async function approvalRoundTrips(count: number): Promise<number[]> {
  provider.setScript((_body, index) => (index < count ? { tool_calls: [{ name: 'current_time', arguments: {} }] } : { content: 'done' }));
  const response = await post('/agents/asker/run', { input: 'ask me', stream: true });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const times: number[] = [];
  let buffer = '';
  let asked = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    const blocks = buffer.split('\n\n');
    buffer = blocks.pop() ?? '';
    for (const block of blocks) {
      const data = block.split('\n').find((line) => line.startsWith('data: '));
      if (!data) continue;
      const event = JSON.parse(data.slice(6)) as { type: string; approval_id?: string };
      if (event.type === 'tool_call.approval_required') {
        asked = performance.now();
        // Approving is the owner's act: the admin credential, as the CLI and the signed-in app send it.
        const decided = await post(`/agents/approvals/${event.approval_id}`, { decision: 'approve' }, { authorization: `Bearer ${services.admin.token}` });
        if (!decided.ok) throw new Error(`approving failed: ${decided.status} ${await decided.text()}`);
      } else if (event.type === 'tool_call.completed' && asked) {
        times.push(performance.now() - asked);
        asked = 0;
      }
    }
  }
  return times;
}

/** Runs `work` while sampling the event loop's delay every 1 ms; answers the longest stall seen, in ms. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stallMs: number; ms: number }> {
  const monitor = monitorEventLoopDelay({ resolution: 1 });
  monitor.enable();
  const started = performance.now();
  try {
    const result = await work();
    return { result, stallMs: monitor.max / 1e6, ms: performance.now() - started };
  } finally {
    monitor.disable();
  }
}

/** One model reply with `count` tool calls, then an answer: the run through Hearth. */
async function burstRun(count: number): Promise<AgentRun> {
  provider.setScript((_body, index) =>
    index === 0 ? { tool_calls: Array.from({ length: count }, () => ({ name: 'current_time', arguments: {} })) } : { content: 'done' },
  );
  return (await (await post('/agents/bench/run', { input: 'burst' })).json()) as AgentRun;
}

/** Reads a finished run's events as SSE (the whole replay), answering how many came. */
async function replay(runId: string): Promise<number> {
  const response = await fetch(`${url}/agents/runs/${runId}/events`, { headers: { accept: 'text/event-stream' } });
  const text = await response.text();
  return text.split('\n\n').filter((block) => block.includes('data:')).length;
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]!;

try {
  process.stdout.write(
    `Hearth agents benchmark — ${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}\n`,
  );
  process.stdout.write(`${steps} model calls per run (${steps - 1} tool calls, then the answer), best of ${rounds} rounds\n`);
  await viaHearth(); // warm up: first connections, statements, the catalog
  const best = { hearth: Infinity, direct: Infinity };
  for (let round = 0; round < rounds; round++) {
    const hearth = await viaHearth();
    const straight = await direct(hearth.bodies);
    process.stdout.write(`round ${round + 1}: run ${hearth.ms.toFixed(1)} ms, direct ${straight.toFixed(1)} ms, ratio ${(hearth.ms / straight).toFixed(2)}\n`);
    best.hearth = Math.min(best.hearth, hearth.ms);
    best.direct = Math.min(best.direct, straight);
  }
  const perStep = (best.hearth - best.direct) / steps;
  process.stdout.write(
    `\nrun loop: ${(best.hearth / steps).toFixed(2)} ms per step through Hearth vs ${(best.direct / steps).toFixed(2)} ms per direct model call: ` +
      `ratio ${(best.hearth / best.direct).toFixed(2)}, overhead ${perStep.toFixed(2)} ms per step\n`,
  );
  const trips = await approvalRoundTrips(approvals);
  process.stdout.write(
    `approval round trip (approval_required seen → approve → tool_call.completed seen), ${trips.length} approvals: ` +
      `p50 ${percentile(trips, 50).toFixed(2)} ms, p95 ${percentile(trips, 95).toFixed(2)} ms\n`,
  );
  if (burst > 0) {
    const made = await longestStall(() => burstRun(burst));
    const calls = made.result.steps[0]!.tool_calls.length;
    process.stdout.write(
      `one reply with ${burst} tool calls: run ${(made.ms / 1000).toFixed(2)} s (${made.result.status}, ${calls} calls recorded), longest event-loop stall ${made.stallMs.toFixed(1)} ms\n`,
    );
    const replayed = await longestStall(() => replay(made.result.id));
    process.stdout.write(
      `replay of its ${replayed.result} events over SSE: ${replayed.ms.toFixed(0)} ms, longest event-loop stall ${replayed.stallMs.toFixed(1)} ms\n`,
    );
  }
} finally {
  await app.close();
  await services.close();
  await provider.close();
  rmSync(dataDir, { recursive: true, force: true });
}
