/**
 * `npm run bench:peer`: one workload against raw node-llama-cpp, Hearth over HTTP on each engine
 * (llama-server and in-process), the engine's own llama-server build run stand-alone, and a full
 * native llama-server build from the llama.cpp source node-llama-cpp bundles (with its default
 * flags, and with `--cache-ram 0`, since its prompt cache adds a serial wait to every request).
 * Same generated `small` GGUF, same token counts, 1/4/8/16 streams, a unique prompt and a new
 * connection per request. Every server runs as its own process; the systems take turns round by
 * round, so a change in the machine's load hits them alike. Best of three rounds after a warm-up;
 * prints tok/s, median first-token time and ratios. Without CMake it says so and compares only raw
 * node-llama-cpp and Hearth in process. HEARTH_BENCH_BUSY=1 runs it all beside a busy background process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { directRun, openDirect } from './direct.js';
import {
  engineServer,
  hearthServerArgs,
  hearthServerBinary,
  llamaServer,
  onTcpPort,
  startHearthProcess,
  startServer,
  type RunningServer,
} from './llama-server.js';
import { BENCH_MODELS, smallModel } from './small-model.js';
import { loadAverages, median, streamsRun, type StreamsRun, uniquePrompt } from './streams.js';

const TOKENS = 128;
// HEARTH_BENCH_ROUNDS and HEARTH_BENCH_STREAMS (e.g. "1,8") shorten a run; the defaults are the comparison.
const ROUNDS = Number(process.env.HEARTH_BENCH_ROUNDS ?? 3);
const STREAMS = (process.env.HEARTH_BENCH_STREAMS ?? '1,4,8,16').split(',').map(Number);
const CONTEXT = 2048;
const PARALLEL = Math.max(...STREAMS);

const print = (line: string) => process.stdout.write(`${line}\n`);

const modelPath = await smallModel();

print(
  `Hearth peer benchmark — ${new Date().toISOString().slice(0, 16)}, ${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
);
print(
  `model: generated small (512 wide, 8 layers, F32); ${TOKENS} tokens per stream, unique prompts, a new connection per request, best of ${ROUNDS} after a warm-up`,
);
print(`load average at start: ${loadAverages()}`);

// HEARTH_BENCH_BUSY=N starts N spinning background processes before any server loads the model:
// the case of a machine already busy with other work (an IDE, a build) when Hearth starts.
const busy = Number(process.env.HEARTH_BENCH_BUSY ?? 0);
const spinners = Array.from({ length: busy }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
process.once('exit', () => spinners.forEach((child) => child.kill('SIGKILL')));
if (busy > 0) print(`${busy} busy background process${busy === 1 ? '' : 'es'} started before the models load`);

// HEARTH_BENCH_NATIVE=0 leaves the native peer out (it takes ten minutes to build the first time).
const server = process.env.HEARTH_BENCH_NATIVE === '0' ? { skipped: 'left out (HEARTH_BENCH_NATIVE=0)' } : await llamaServer(print);
if ('skipped' in server) print(`llama-server (native peer): skipped — ${server.skipped}`);
const engineBuild = await engineServer(print);
if ('skipped' in engineBuild) print(`Hearth's llama-server engine: skipped — ${engineBuild.skipped}`);

interface System {
  label: string;
  run(streams: number): Promise<StreamsRun>;
}
const started: RunningServer[] = [];
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void Promise.all(started.map((running) => running.stop())).finally(() => process.exit(130)));
}
const systems: System[] = [];

// Raw node-llama-cpp in this process: one LlamaChat per sequence, the better of 1 and all threads.
const direct = await openDirect(modelPath, PARALLEL, CONTEXT);
const threadCounts = [...new Set([1, cpus().length])];
systems.push({
  label: 'raw node-llama-cpp',
  async run(streams) {
    let best: StreamsRun | undefined;
    for (const threads of threadCounts) {
      const run = await directRun(direct, threads, uniquePrompt, TOKENS, streams);
      if (!best || run.tokensPerSecond > best.tokensPerSecond) best = { tokensPerSecond: run.tokensPerSecond, firstTokenMs: run.firstTokenMs, tokens: 0 };
    }
    return best!;
  },
});

// Hearth as its own process per engine, default settings apart from the sequence count and context size.
const hearths: { label: string; url: string; folder: string }[] = [];
for (const [label, engine] of [
  ['Hearth HTTP (llama-server engine)', 'server'],
  ['Hearth HTTP (in-process)', 'in-process'],
] as const) {
  if (engine === 'server' && 'skipped' in engineBuild) continue;
  const folder = mkdtempSync(join(tmpdir(), `hearth-bench-peer-${engine}-`));
  // HEARTH_BENCH_HEARTH_BUILD=quick keeps Hearth's engine on the quick build even where the native one is built.
  const running = await startHearthProcess(folder, {
    modelsDir: BENCH_MODELS,
    parallel: PARALLEL,
    context: CONTEXT,
    engine,
    native: process.env.HEARTH_BENCH_HEARTH_BUILD !== 'quick',
  });
  started.push(running);
  hearths.push({ label, url: running.url, folder });
  systems.push({ label, run: (streams) => streamsRun(running.url, 'small', TOKENS, streams) });
}

const common = ['-m', modelPath, '--host', '127.0.0.1', '-np', String(PARALLEL), '-c', String(CONTEXT * PARALLEL)];
const serverHearth = hearths.find((entry) => entry.label.includes('llama-server'));
const engineArgs = 'paths' in engineBuild && serverHearth ? await hearthServerArgs(serverHearth.url, serverHearth.folder) : undefined;
// The thread count Hearth's engine chose from the load when it started its process: the native
// peer also runs with it when it differs from llama-server's default (every core), since
// llama.cpp's threads collapse on a machine with no free core.
const engineThreads = engineArgs?.[engineArgs.indexOf('-t') + 1];
if ('binary' in server) {
  const variants: [string, string[]][] = [
    ['llama-server', []],
    ['llama-server --cache-ram 0', ['--cache-ram', '0']],
  ];
  if (engineThreads && Number(engineThreads) !== cpus().length)
    variants.push([`llama-server -t ${engineThreads}`, ['-t', engineThreads, '-tb', engineThreads]]);
  for (const [label, extra] of variants) {
    const port = 19000 + Math.floor(Math.random() * 1000);
    const running = await startServer(server.binary, [...common, '--port', String(port), ...extra], port);
    started.push(running);
    systems.push({ label, run: (streams) => streamsRun(running.url, 'small', TOKENS, streams) });
  }
}
if ('paths' in engineBuild && engineArgs) {
  // The engine's binary on node-llama-cpp's libraries, stand-alone with the very flags Hearth gave it: HTTP over engine.
  // The binary Hearth runs the model on: the quick build, or the native one once it is built.
  const { libraries } = engineBuild.paths;
  const binary = await hearthServerBinary(serverHearth!.url, serverHearth!.folder);
  print(`Hearth's llama-server engine runs ${binary === engineBuild.paths.binary ? 'the quick build' : `the native build (${binary})`}`);
  const port = 19000 + Math.floor(Math.random() * 1000);
  const args = [...engineArgs];
  onTcpPort(args, port);
  print(`engine llama-server stand-alone: ${args.join(' ')}`);
  const running = await startServer(binary, args, port, { ...process.env, LD_LIBRARY_PATH: libraries.dir }, libraries.dir);
  started.push(running);
  systems.push({ label: 'engine llama-server stand-alone', run: (streams) => streamsRun(running.url, 'small', TOKENS, streams) });
}

type Best = Record<number, StreamsRun>;
const results = new Map<string, Best>(systems.map((system) => [system.label, {}]));
try {
  for (const streams of STREAMS) {
    for (const system of systems) await system.run(streams); // warm-up: loads, trials threads, fills caches
    const runs = new Map<string, StreamsRun[]>(systems.map((system) => [system.label, []]));
    for (let round = 0; round < ROUNDS; round++) for (const system of systems) runs.get(system.label)!.push(await system.run(streams));
    for (const system of systems) {
      const all = runs.get(system.label)!;
      const fastest = all.reduce((a, b) => (b.tokensPerSecond > a.tokensPerSecond ? b : a));
      results.get(system.label)![streams] = { ...fastest, firstTokenMs: median(all.map((run) => run.firstTokenMs)) };
      print(
        `  ${system.label}, ${streams} stream${streams > 1 ? 's' : ''}: ${fastest.tokensPerSecond.toFixed(1)} tok/s, first token ${median(all.map((run) => run.firstTokenMs)).toFixed(0)} ms`,
      );
    }
  }
  const inProcess = hearths.find((entry) => entry.label.includes('in-process'))!;
  const adminToken = readFileSync(join(inProcess.folder, 'admin-token'), 'utf8').trim();
  const status = (await (
    await fetch(`${inProcess.url}/admin/status`, { headers: { authorization: `Bearer ${adminToken}` } })
  )
    .json()
    .catch(() => undefined)) as { loaded?: { thread_choices?: { tokens: string; threads: number; ms_per_token: Record<string, number> }[] }[] } | undefined;
  const choices = status?.loaded?.[0]?.thread_choices ?? [];
  print('');
  print(
    `Hearth's thread choice per batch size (tokens per decode → threads; ms per token of each count): ${
      choices
        .map(
          (choice) =>
            `${choice.tokens} → ${choice.threads} (${Object.entries(choice.ms_per_token)
              .map(([threads, ms]) => `${threads}: ${ms}`)
              .join(', ')})`,
        )
        .join('; ') || 'not reported'
    }`,
  );
} finally {
  await direct.close();
  for (const running of started) await running.stop();
}

const all = systems.map((system) => ({ label: system.label, best: results.get(system.label)! }));
const ours = all.filter((entry) => entry.label.startsWith('Hearth'));
const peers = all.filter((entry) => entry.label.startsWith('llama-server'));
const standAlone = all.find((entry) => entry.label === 'engine llama-server stand-alone');
const row = (cells: string[]) => print(`| ${cells.join(' | ')} |`);
const cell = (run: StreamsRun) => `${run.tokensPerSecond.toFixed(1)} tok/s, ${run.firstTokenMs.toFixed(0)} ms`;
const ratio = (a: StreamsRun | undefined, b: StreamsRun | undefined) => (a && b ? (a.tokensPerSecond / b.tokensPerSecond).toFixed(2) : '–');
const gain = (best: Best) => (best[8] && best[1] ? `${(best[8].tokensPerSecond / best[1].tokensPerSecond).toFixed(2)}×` : '–');
const short = (label: string) =>
  label.replace('Hearth HTTP (llama-server engine)', 'Hearth (server)').replace('Hearth HTTP (in-process)', 'Hearth (in-process)');
const ratioColumns = [
  ...ours.flatMap((hearth) => peers.map((peer) => ({ label: `${short(hearth.label)} / ${peer.label}`, of: hearth, to: peer }))),
  ...(standAlone
    ? ours
        .filter((hearth) => hearth.label.includes('server'))
        .map((hearth) => ({ label: `${short(hearth.label)} / stand-alone (HTTP over engine)`, of: hearth, to: standAlone }))
    : []),
];
print('');
row(['streams', ...all.map((entry) => entry.label), ...ratioColumns.map((column) => column.label)]);
row(Array.from({ length: 1 + all.length + ratioColumns.length }, () => '---'));
for (const streams of STREAMS) {
  row([
    String(streams),
    ...all.map((entry) => cell(entry.best[streams]!)),
    ...ratioColumns.map((column) => ratio(column.of.best[streams], column.to.best[streams])),
  ]);
}
row(['gain of 8 streams over 1', ...all.map((entry) => gain(entry.best)), ...ratioColumns.map(() => '')]);
print('');
print(`load average at end: ${loadAverages()} (figures taken while the machine is busy are noisy; the systems take turns, so compare ratios)`);
process.exit(0);
