/**
 * `npm run bench:remote -- [--words N] [--rounds N]`
 *
 * Run events over the secure channel against the same run on the host directly. Two real
 * `hearth serve` processes on 127.0.0.1 (a host with the channel open, a device paired with it
 * through the CLI) and the scripted OpenAI-compatible provider on loopback, whose answers take
 * no time: what is measured is Hearth's own path for events. Each round runs the same agent run
 * three ways, one after the other:
 *   host      — POST /agents/bench/run on the host's plain-HTTP loopback listener;
 *   channel   — the same route on the host's TLS 1.3 listener with the device's client certificate;
 *   device    — POST /agents/home%2Fbench/run on the device, which proxies the run and its event
 *               stream over mutual TLS (what a paired companion's clients use).
 * Event latency is the time from the host storing an event (its clock) to this client reading it
 * (the same machine, the same clock; millisecond resolution). Throughput is events per second
 * from the first event read to the last.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import type { AgentRunEvent } from '#shared/api/agents.js';
import type { PairingCode } from '#shared/api/remote.js';
import { credentialSecretName } from '../companion/src/channel/device/hosts.js';
import { readEvents } from '../companion/src/sse-reader.js';
import { startScriptedProvider } from '../tests/fixtures/scripted-provider.js';
import { cleanEnv, HEARTH_BIN, runNode, spawnListening } from '../tests/helpers/hearth-process.js';

const { values } = parseArgs({ options: { words: { type: 'string', default: '400' }, rounds: { type: 'string', default: '5' } } });
const words = Number(values.words);
const rounds = Number(values.rounds);

const provider = await startScriptedProvider();
// Two tool calls, then an answer of `words` words: one message.delta per word.
provider.setScript((_body, index) =>
  index % 3 < 2 ? { tool_calls: [{ name: 'current_time', arguments: {} }] } : { content: Array.from({ length: words }, (_, n) => `w${n}`).join(' ') },
);
const agent = { id: 'bench', model: 'script/scripted', tools: ['current_time'], memory: { enabled: false } };

/** `hearth serve` on 127.0.0.1 with its own data folder and this configuration. */
async function serve(document: Record<string, unknown>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-remote-bench-'));
  writeFileSync(join(dataDir, 'config.yaml'), JSON.stringify({ version: 1, ...document }));
  const env = cleanEnv({ HEARTH_LOG_LEVEL: 'error' });
  return { dataDir, ...(await spawnListening(HEARTH_BIN, ['serve', '--port', '0', '--data-dir', dataDir, '--no-external-models'], env)) };
}

async function cli(dataDir: string, args: string[]): Promise<string> {
  const result = await runNode(HEARTH_BIN, [...args, '--data-dir', dataDir]);
  if (result.code !== 0) throw new Error(`hearth ${args[0]} failed: ${result.stderr}`);
  return result.stdout;
}

const host = await serve({
  server: { remote: { enabled: true, host: '127.0.0.1', port: 0 } },
  providers: [{ name: 'script', base_url: provider.baseUrl, models: ['scripted'] }],
  agents: [agent],
});
const device = await serve({});
const pairing = JSON.parse(await cli(host.dataDir, ['devices', 'pair', '--json', '--agents', 'bench'])) as PairingCode;
await cli(device.dataDir, ['remote', 'add', 'home', pairing.url, '--code', pairing.code, '--fingerprint', pairing.fingerprint]);
const secrets = JSON.parse(readFileSync(join(device.dataDir, 'secrets.json'), 'utf8')) as Record<string, string>;
const credential = JSON.parse(secrets[credentialSecretName('home')]!) as { key: string; certificate: string; host_certificate: string };
const hostDb = new Database(join(host.dataDir, 'hearth.db'), { readonly: true });

interface Measured {
  /** POST sent → terminal event read. */
  totalMs: number;
  /** Per event (deltas and tool calls): host stored → read here, ms. */
  latencies: number[];
  eventsPerSecond: number;
}

type Body = AsyncIterable<Uint8Array | Buffer | string>;

/** Reads a run's SSE body, noting when each event arrives (wall clock, ms). */
async function consume(body: Body, sent: number): Promise<{ arrivals: Map<number, number>; hostRun: string; totalMs: number }> {
  const arrivals = new Map<number, number>();
  let hostRun = '';
  for await (const sse of readEvents(body)) {
    const now = performance.timeOrigin + performance.now();
    const event = JSON.parse(sse.data) as AgentRunEvent;
    arrivals.set(event.sequence, now);
    if (event.type === 'run.created') hostRun = event.run.id;
    if (event.type === 'run.completed' || event.type === 'run.failed' || event.type === 'run.cancelled') {
      if (event.type !== 'run.completed') throw new Error(`the run ended ${event.type}`);
      return { arrivals, hostRun, totalMs: now - sent };
    }
  }
  throw new Error('the stream ended before the run did');
}

/** The host's stored events of a run (sequence → stored at, ms), middle events only. */
function stored(runId: string): Map<number, number> {
  const rows = hostDb
    .prepare<[string], { sequence: number; created_at: number; type: string }>('SELECT sequence, created_at, type FROM agent_run_events WHERE run_id = ?')
    .all(runId);
  return new Map(rows.filter((row) => !row.type.startsWith('run.')).map((row) => [row.sequence, row.created_at]));
}

function measure(arrivals: Map<number, number>, hostRun: string, totalMs: number): Measured {
  const origin = stored(hostRun);
  const latencies = [...origin].map(([sequence, at]) => arrivals.get(sequence)! - at);
  const times = [...arrivals.values()];
  return { totalMs, latencies, eventsPerSecond: (arrivals.size - 1) / ((Math.max(...times) - Math.min(...times)) / 1000) };
}

const runBody = JSON.stringify({ input: 'go', stream: true });

async function viaHost(): Promise<Measured> {
  const sent = performance.timeOrigin + performance.now();
  const response = await fetch(`${host.url}/agents/bench/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: runBody });
  const read = await consume(response.body as unknown as Body, sent);
  return measure(read.arrivals, read.hostRun, read.totalMs);
}

async function viaChannel(): Promise<Measured> {
  const sent = performance.timeOrigin + performance.now();
  const response = await new Promise<Body>((resolve, reject) => {
    const outgoing = httpsRequest(new URL('/agents/bench/run', pairing.url), {
      method: 'POST',
      ca: credential.host_certificate,
      key: credential.key,
      cert: credential.certificate,
      minVersion: 'TLSv1.3',
      checkServerIdentity: () => undefined,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    });
    outgoing.once('response', resolve);
    outgoing.once('error', reject);
    outgoing.end(runBody);
  });
  const read = await consume(response, sent);
  return measure(read.arrivals, read.hostRun, read.totalMs);
}

async function viaDevice(): Promise<Measured> {
  const sent = performance.timeOrigin + performance.now();
  const response = await fetch(`${device.url}/agents/home%2Fbench/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: runBody });
  const read = await consume(response.body as unknown as Body, sent);
  // The device's run numbers its events as the host's run does; the host's run is its newest.
  const hostRun = hostDb.prepare<[], { id: string }>("SELECT id FROM agent_runs WHERE agent_id = 'bench' ORDER BY created_at DESC, rowid DESC LIMIT 1").get()!
    .id;
  return measure(read.arrivals, hostRun, read.totalMs);
}

const median = (values: number[]) => percentile(values, 50);
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]!;

try {
  const [one, five] = loadavg();
  process.stdout.write(
    `Hearth remote benchmark — ${new Date().toISOString().slice(0, 16)}Z, ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}, load ${one!.toFixed(2)} / ${five!.toFixed(2)}\n`,
  );
  process.stdout.write(`each run: 2 tool calls, then ${words} words (≈${words + 6} events); ${rounds} rounds, the three paths one after the other\n`);
  const ways = { host: viaHost, channel: viaChannel, device: viaDevice };
  for (const way of Object.values(ways)) await way(); // warm up: connections, TLS sessions, statements
  const results: Record<keyof typeof ways, Measured[]> = { host: [], channel: [], device: [] };
  for (let round = 0; round < rounds; round++) {
    for (const [name, way] of Object.entries(ways) as [keyof typeof ways, () => Promise<Measured>][]) results[name].push(await way());
    process.stdout.write(
      `round ${round + 1}: run ${(['host', 'channel', 'device'] as const).map((name) => `${name} ${results[name].at(-1)!.totalMs.toFixed(0)} ms`).join(', ')}\n`,
    );
  }
  const summary = (name: keyof typeof ways) => {
    const all = results[name].flatMap((entry) => entry.latencies);
    return {
      p50: median(all),
      p95: percentile(all, 95),
      rate: median(results[name].map((entry) => entry.eventsPerSecond)),
      total: median(results[name].map((entry) => entry.totalMs)),
    };
  };
  const host = summary('host');
  process.stdout.write('\npath      event latency p50 / p95   events/s (median)   run (median)   ratio to host (run, events/s)\n');
  for (const name of ['host', 'channel', 'device'] as const) {
    const row = summary(name);
    process.stdout.write(
      `${name.padEnd(9)} ${`${row.p50.toFixed(1)} / ${row.p95.toFixed(1)} ms`.padEnd(25)} ${row.rate.toFixed(0).padStart(8)}            ${`${row.total.toFixed(0)} ms`.padStart(8)}       ` +
        `${(row.total / host.total).toFixed(2)} × time, ${(row.rate / host.rate).toFixed(2)} × rate\n`,
    );
  }
} finally {
  hostDb.close();
  await Promise.all([host.stop(), device.stop()]);
  await provider.close();
  for (const folder of [host.dataDir, device.dataDir]) rmSync(folder, { recursive: true, force: true });
}
