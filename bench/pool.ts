/**
 * `npm run bench:pool`: what a provider pool costs and what it buys, on the generated `small` model.
 *
 * 1. The proxy's cost: one endpoint addressed directly against the same endpoint through a Hearth
 *    pool of one (`endpoints: [that one]`), at 1 and 8 streams, taking turns round by round; the
 *    ratio of tokens per second and the first-token time of each.
 * 2. Routing around a killed endpoint: a pool of two; one is killed (SIGKILL) while a stream runs on
 *    it. How long until that stream gets its error event, what the first requests after the kill
 *    take against the same requests before it, and how long until the circuit opens.
 * 3. Conversation affinity: multi-turn conversations (each with its own ~1,000-token document, as a
 *    chat over a file would have), every turn's first-token time with affinity
 *    (`X-Service-Conversation-Id`) and without (each turn routed by load alone).
 *
 * The endpoints are llama-server, built from node-llama-cpp's own llama.cpp source as for
 * bench:peer (bench/llama-server.ts), when it is built or can be; otherwise `hearth serve`
 * processes, and the output says so. Figures taken on a busy machine are noisy: compare ratios.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from '../companion/src/store/files.js';
import type { ServerStatus } from '#shared/api/admin.js';
import { llamaServer } from './llama-server.js';
import { BENCH_MODELS, smallModel } from './small-model.js';
import { chatBody, loadAverages, median, streamsRun, type StreamsRun } from './streams.js';

const ROUNDS = Number(process.env.HEARTH_BENCH_ROUNDS ?? 3);
const TOKENS = 128;
const CONTEXT = 2048;
const PARALLEL = 8;
const TURNS = Number(process.env.HEARTH_BENCH_TURNS ?? 6);
const CONVERSATIONS = Number(process.env.HEARTH_BENCH_CONVERSATIONS ?? 3);

const print = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const port = () => 20000 + Math.floor(Math.random() * 20000);

const modelPath = await smallModel();
const hearthBin = fileURLToPath(new URL('../bin/hearth.js', import.meta.url));

print(
  `Hearth pool benchmark — ${new Date().toISOString().slice(0, 16)}, ${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
);
print(`load average at start: ${loadAverages()}`);
const built = await llamaServer(print);
const engine = 'binary' in built ? 'llama-server' : 'hearth serve';
if ('skipped' in built) print(`llama-server: not available (${built.skipped}); the endpoints are hearth serve processes instead`);
print(`endpoints: ${engine} with the generated small model (512 wide, 8 layers, F32), ${PARALLEL} parallel sequences, context ${CONTEXT} each`);

interface Process {
  url: string;
  port: number;
  child: ChildProcess;
  stop(signal?: NodeJS.Signals): Promise<void>;
}
const running = new Set<Process>();
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void Promise.all([...running].map((child) => child.stop())).finally(() => process.exit(130)));

/** Starts a server process and waits until GET /health answers 200. */
async function start(command: string, args: string[], at: number, env: NodeJS.ProcessEnv = process.env): Promise<Process> {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  child.stderr!.on('data', (piece: Buffer) => (stderr = (stderr + piece.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${at}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command} exited: ${stderr}`);
    if (Date.now() > deadline) throw new Error(`${command} did not answer /health in time: ${stderr}`);
    if (
      await fetch(`${url}/health`).then(
        (response) => response.ok,
        () => false,
      )
    )
      break;
    await sleep(100);
  }
  const process_: Process = {
    url,
    port: at,
    child,
    stop: (signal = 'SIGTERM') =>
      new Promise<void>((resolve) => {
        running.delete(process_);
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
  running.add(process_);
  return process_;
}

/** One endpoint: llama-server with one thread (two of them share this machine), or hearth serve. */
async function startEndpoint(at = port()): Promise<Process> {
  if ('binary' in built)
    return start(
      built.binary,
      ['-m', modelPath, '--host', '127.0.0.1', '--port', String(at), '-np', String(PARALLEL), '-c', String(CONTEXT * PARALLEL), '-t', '1'],
      at,
    );
  const dir = mkdtempSync(join(tmpdir(), 'hearth-bench-pool-endpoint-'));
  writeFileAtomic(
    join(dir, 'config.yaml'),
    `version: 1\nmodels:\n  dirs: [${JSON.stringify(BENCH_MODELS)}]\n  parallel: ${PARALLEL}\n  context_size: ${CONTEXT}\n  threads: 1\n  external_sources: false\n`,
  );
  return start(process.execPath, [hearthBin, 'serve', '--host', '127.0.0.1', '--port', String(at), '--data-dir', dir, '--no-external-models'], at, {
    ...process.env,
    HEARTH_LOG_LEVEL: 'warn',
  });
}

const first = await startEndpoint();
let second = await startEndpoint();
const frontDir = mkdtempSync(join(tmpdir(), 'hearth-bench-pool-front-'));
writeFileAtomic(
  join(frontDir, 'config.yaml'),
  [
    'version: 1',
    'models: { external_sources: false }',
    'providers:',
    '  - name: one',
    `    endpoints: [{ url: "${first.url}/v1" }]`,
    '    models: [small]',
    '  - name: two',
    `    endpoints: [{ url: "${first.url}/v1" }, { url: "${second.url}/v1" }]`,
    '    models: [small]',
    '    health: { interval_seconds: 1, failures_to_open: 3, open_seconds: 1 }',
    '',
  ].join('\n'),
);
const frontPort = port();
const front = await start(
  process.execPath,
  [hearthBin, 'serve', '--host', '127.0.0.1', '--port', String(frontPort), '--data-dir', frontDir, '--no-external-models'],
  frontPort,
  {
    ...process.env,
    HEARTH_LOG_LEVEL: 'warn',
  },
);
const adminToken = readFileSync(join(frontDir, 'admin-token'), 'utf8').trim();
const poolStatus = async () =>
  ((await (await fetch(`${front.url}/admin/status`, { headers: { authorization: `Bearer ${adminToken}` } })).json()) as ServerStatus).providers.find(
    (provider) => provider.name === 'two',
  )!.endpoints;

const row = (cells: string[]) => print(`| ${cells.join(' | ')} |`);
const cell = (run: StreamsRun) => `${run.tokensPerSecond.toFixed(1)} tok/s, ${run.firstTokenMs.toFixed(0)} ms`;

try {
  // 1. The proxy's cost.
  print('');
  print(`## 1. A pool of one against its endpoint addressed directly (${TOKENS} tokens a stream, unique prompts, best of ${ROUNDS} after a warm-up)`);
  const systems = [
    { label: 'direct', run: (streams: number) => streamsRun(first.url, 'small', TOKENS, streams) },
    { label: 'through the pool', run: (streams: number) => streamsRun(front.url, 'one/small', TOKENS, streams) },
  ];
  const best = new Map<string, StreamsRun>();
  for (const streams of [1, 8]) {
    for (const system of systems) await system.run(streams);
    const runs = new Map(systems.map((system) => [system.label, [] as StreamsRun[]]));
    for (let round = 0; round < ROUNDS; round++) for (const system of systems) runs.get(system.label)!.push(await system.run(streams));
    for (const system of systems) {
      const all = runs.get(system.label)!;
      const fastest = all.reduce((a, b) => (b.tokensPerSecond > a.tokensPerSecond ? b : a));
      best.set(`${system.label} ${streams}`, { ...fastest, firstTokenMs: median(all.map((run) => run.firstTokenMs)) });
    }
  }
  print('');
  row(['streams', 'direct', 'through the pool', 'pool / direct (tok/s)', 'first token added']);
  row(['---', '---', '---', '---', '---']);
  for (const streams of [1, 8]) {
    const direct = best.get(`direct ${streams}`)!;
    const pooled = best.get(`through the pool ${streams}`)!;
    row([
      String(streams),
      cell(direct),
      cell(pooled),
      (pooled.tokensPerSecond / direct.tokensPerSecond).toFixed(3),
      `${(pooled.firstTokenMs - direct.firstTokenMs).toFixed(1)} ms`,
    ]);
  }

  // 2. Routing around a killed endpoint.
  print('');
  print('## 2. Killing one endpoint of two (SIGKILL) while a stream runs on it');
  const short = (headers: Record<string, string> = {}) =>
    timedChat(front.url, 'two/small', [{ role: 'user', content: `A short question ${Math.random()}` }], 16, headers);
  for (let index = 0; index < 4; index++) await short();
  const before: number[] = [];
  for (let index = 0; index < 8; index++) before.push((await short()).totalMs);
  // A long stream on the endpoint that will be killed: the second of two streams goes to the endpoint the first left idle.
  const streams = [streamOn(front.url, 'two/small', 1500)];
  await streams[0]!.started;
  if ((await poolStatus())[1]!.outstanding !== 1) {
    streams.push(streamOn(front.url, 'two/small', 1500));
    await streams[1]!.started;
  }
  const victim = streams.at(-1)!;
  const killedAt = performance.now();
  await second.stop('SIGKILL');
  const ended = await victim.ended;
  const errorMs = ended.errorAt ? ended.errorAt - killedAt : NaN;
  if (streams.length > 1) {
    streams[0]!.abort();
    await streams[0]!.ended.catch(() => undefined);
  }
  const after: number[] = [];
  for (let index = 0; index < 8; index++) after.push((await short()).totalMs);
  let openMs = NaN;
  for (const deadline = performance.now() + 30_000; performance.now() < deadline; await sleep(20)) {
    if ((await poolStatus())[1]!.circuit === 'open') {
      openMs = performance.now() - killedAt;
      break;
    }
  }
  print('');
  row(['measure', 'figure']);
  row(['---', '---']);
  row(['the stream on the killed endpoint: its error event after the kill', `${errorMs.toFixed(1)} ms (${ended.error ?? 'no error event'})`]);
  row(['requests before the kill (16 tokens, median / slowest)', `${median(before).toFixed(1)} / ${Math.max(...before).toFixed(1)} ms`]);
  row(['the first 8 requests after it (median / slowest)', `${median(after).toFixed(1)} / ${Math.max(...after).toFixed(1)} ms, all answered`]);
  row(['the circuit of the killed endpoint open after', `${openMs.toFixed(0)} ms (checks every 1 s, 3 failures open it)`]);

  // 3. Conversation affinity.
  second = await startEndpoint(second.port);
  for (const deadline = performance.now() + 60_000; performance.now() < deadline && (await poolStatus())[1]!.circuit !== 'closed';) await sleep(100);
  print('');
  print(
    `## 3. Multi-turn conversations on a pool of two ${engine} endpoints: first-token time per turn with and without affinity (${CONVERSATIONS} conversations of ${TURNS} turns each way)`,
  );
  const turnsWith: number[][] = Array.from({ length: TURNS }, () => []);
  const turnsWithout: number[][] = Array.from({ length: TURNS }, () => []);
  let promptTokens = 0;
  for (let conversation = 0; conversation < CONVERSATIONS; conversation++) {
    for (const affinity of [true, false]) {
      const document = documentText(`${conversation}-${affinity}-${Math.random()}`);
      const messages: { role: string; content: string }[] = [{ role: 'system', content: `Answer questions about this document.\n\n${document}` }];
      const id = `affinity-${conversation}-${affinity}-${Math.random()}`;
      for (let turn = 0; turn < TURNS; turn++) {
        messages.push({
          role: 'user',
          content: `Question ${turn + 1}: what does part ${turn + 1} of the document say about the lighthouse, the keeper and the sea?`,
        });
        const answer = await timedChat(front.url, 'two/small', messages, 24, affinity ? { 'x-service-conversation-id': id } : {});
        (affinity ? turnsWith : turnsWithout)[turn]!.push(answer.firstMs);
        promptTokens = Math.max(promptTokens, answer.promptTokens);
        messages.push({ role: 'assistant', content: answer.text });
      }
    }
  }
  print('');
  row(['turn', 'with affinity (median first token)', 'without', 'without / with']);
  row(['---', '---', '---', '---']);
  for (let turn = 0; turn < TURNS; turn++) {
    const withMs = median(turnsWith[turn]!);
    const withoutMs = median(turnsWithout[turn]!);
    row([String(turn + 1), `${withMs.toFixed(0)} ms`, `${withoutMs.toFixed(0)} ms`, (withoutMs / withMs).toFixed(2)]);
  }
  const later = (turns: number[][]) => median(turns.slice(1).flat());
  row(['2 to last', `${later(turnsWith).toFixed(0)} ms`, `${later(turnsWithout).toFixed(0)} ms`, (later(turnsWithout) / later(turnsWith)).toFixed(2)]);
  print('');
  print(`prompt of the last turn: ${promptTokens} tokens`);
} finally {
  for (const child of [...running]) await child.stop();
}
print('');
print(`load average at end: ${loadAverages()} (figures taken while the machine is busy are noisy; compare ratios)`);
process.exit(0);

/** A document of about a thousand tokens, different for each seed (so no cache but a conversation's own helps). */
function documentText(seed: string): string {
  const words = ['lighthouse', 'keeper', 'storm', 'harbour', 'lantern', 'tide', 'gull', 'rock', 'fog', 'ship', 'night', 'rope', 'bell', 'shore'];
  let state = [...seed].reduce((hash, char) => (hash * 31 + char.charCodeAt(0)) >>> 0, 7);
  const next = () => (state = (state * 1103515245 + 12345) >>> 0);
  const parts: string[] = [`Document ${seed}.`];
  for (let part = 1; part <= 6; part++) {
    const sentence = Array.from({ length: 28 }, () => words[next() % words.length]).join(' ');
    parts.push(`Part ${part}: ${sentence}.`);
  }
  return parts.join('\n');
}

interface Timed {
  firstMs: number;
  totalMs: number;
  text: string;
  promptTokens: number;
}

/** One streamed chat completion: its first-token and total time, its text and its prompt tokens. */
async function timedChat(
  url: string,
  model: string,
  messages: { role: string; content: string }[],
  maxTokens: number,
  headers: Record<string, string> = {},
): Promise<Timed> {
  const started = performance.now();
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: chatBody(model, maxTokens, messages),
  });
  if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  let firstMs = 0;
  let text = '';
  let promptTokens = 0;
  let pending = '';
  const decoder = new TextDecoder();
  for await (const piece of response.body as unknown as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(piece, { stream: true });
    const events = pending.split('\n\n');
    pending = events.pop()!;
    for (const event of events) {
      if (!event.startsWith('data: {')) continue;
      const chunk = JSON.parse(event.slice(6)) as { choices?: { delta?: { content?: string } }[]; usage?: { prompt_tokens: number } | null; error?: unknown };
      if (chunk.error) throw new Error(JSON.stringify(chunk.error));
      const delta = chunk.choices?.[0]?.delta?.content;
      if (delta) {
        if (!firstMs) firstMs = performance.now() - started;
        text += delta;
      }
      if (chunk.usage) promptTokens = chunk.usage.prompt_tokens;
    }
  }
  return { firstMs, totalMs: performance.now() - started, text, promptTokens };
}

/** A long stream: resolves `started` at its first content, `ended` with when an error event came. */
function streamOn(url: string, model: string, maxTokens: number) {
  const controller = new AbortController();
  let resolveStarted!: () => void;
  const started = new Promise<void>((resolve) => (resolveStarted = resolve));
  const ended = (async () => {
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Tell me a very long story.' }], max_tokens: maxTokens, stream: true }),
    });
    const decoder = new TextDecoder();
    let text = '';
    for await (const piece of response.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(piece, { stream: true });
      if (text.includes('"content":"')) resolveStarted();
      const error = /"code":"([a-z_]+)"/.exec(text);
      if (error && text.includes('"error"')) return { errorAt: performance.now(), error: error[1] };
    }
    resolveStarted();
    return { errorAt: undefined, error: undefined };
  })();
  return { started, ended, abort: () => controller.abort() };
}
