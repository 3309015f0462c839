/**
 * `npm run bench:threads`: how many threads, and how they wait, for the llama-server engine, on a
 * quiet machine and with busy background processes started before the model loads. Every variant
 * is its own llama-server process on the generated `small` model (the engine's build on
 * node-llama-cpp's libraries, and the native peer when built), with the engine's layout flags; the
 * variants take turns round by round. Busy processes are plain spinning Node processes at normal
 * priority, one per count in HEARTH_BENCH_BUSY (default "0,1": quiet, then one). Prints tok/s and
 * each variant's ratio to the native peer at its defaults, in the same condition.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import { engineServer, llamaServer, startServer, type RunningServer } from './llama-server.js';
import { smallModel } from './small-model.js';
import { loadAverages, streamsRun, type StreamsRun } from './streams.js';

const TOKENS = 128;
const ROUNDS = Number(process.env.HEARTH_BENCH_ROUNDS ?? 2);
const STREAMS = (process.env.HEARTH_BENCH_STREAMS ?? '1,4,8').split(',').map(Number);
const BUSY = (process.env.HEARTH_BENCH_BUSY ?? '0,1').split(',').map(Number);
const PARALLEL = Math.max(...STREAMS);
const CONTEXT = 2048;
const cores = cpus().length;

const print = (line: string) => process.stdout.write(`${line}\n`);

const modelPath = await smallModel();

print(`Hearth threads benchmark — ${new Date().toISOString().slice(0, 16)}, ${cores} × ${cpus()[0]?.model.trim()}, Node ${process.version}`);
print(`model: generated small; ${TOKENS} tokens per stream, best of ${ROUNDS} after a warm-up; busy background processes: ${BUSY.join(', ')}`);

const native = await llamaServer(print);
const engine = await engineServer(print);
if ('skipped' in engine) {
  print(`Hearth's llama-server engine: skipped — ${engine.skipped}`);
  process.exit(0);
}
if ('skipped' in native) print(`native llama-server: skipped — ${native.skipped} (ratios are then to the engine build at its defaults)`);

interface Variant {
  label: string;
  binary: 'native' | 'engine';
  args: string[];
}
const all = String(cores);
const variants = (
  [
    { label: 'native, defaults', binary: 'native', args: [] },
    { label: `native -t ${all} --poll 0`, binary: 'native', args: ['-t', all, '-tb', all, '--poll', '0'] },
    { label: `engine -t ${all} (poll 50, the default)`, binary: 'engine', args: ['-t', all, '-tb', all] },
    { label: `engine -t ${all} --poll 0`, binary: 'engine', args: ['-t', all, '-tb', all, '--poll', '0'] },
    { label: `engine -t ${all} --poll 100`, binary: 'engine', args: ['-t', all, '-tb', all, '--poll', '100'] },
    ...(cores > 1 ? [{ label: 'engine -t 1', binary: 'engine', args: ['-t', '1', '-tb', '1'] }] : []),
  ] as Variant[]
).filter((variant) => variant.binary === 'engine' || 'binary' in native);

// The engine's layout flags (Hearth starts its process with these on a CPU); only threads differ.
const layout = [
  '-m',
  modelPath,
  '--host',
  '127.0.0.1',
  '-np',
  String(PARALLEL),
  '-c',
  String(CONTEXT * PARALLEL),
  '--no-kv-unified',
  '-ngl',
  '0',
  '--fit',
  'off',
];

const spinners: ChildProcess[] = [];
const stopSpinners = () => spinners.splice(0).forEach((child) => child.kill('SIGKILL'));
const started: RunningServer[] = [];
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    stopSpinners();
    void Promise.all(started.map((running) => running.stop())).finally(() => process.exit(130));
  });
}

const table: { busy: number; label: string; streams: number; run: StreamsRun }[] = [];
for (const busy of BUSY) {
  for (let i = 0; i < busy; i++) spinners.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  print('');
  print(`${busy} busy background process${busy === 1 ? '' : 'es'}; load average ${loadAverages()}`);
  const running: { variant: Variant; server: RunningServer }[] = [];
  for (const variant of variants) {
    const port = 19000 + Math.floor(Math.random() * 1000);
    const args = [...layout, '--port', String(port), ...variant.args];
    const server =
      variant.binary === 'native' && 'binary' in native
        ? await startServer(native.binary, args, port)
        : await startServer(engine.paths.binary, args, port, { ...process.env, LD_LIBRARY_PATH: engine.paths.libraries.dir }, engine.paths.libraries.dir);
    started.push(server);
    running.push({ variant, server });
  }
  for (const streams of STREAMS) {
    for (const { server } of running) await streamsRun(server.url, 'small', TOKENS, streams); // warm-up
    const best = new Map<string, StreamsRun>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const { variant, server } of running) {
        const run = await streamsRun(server.url, 'small', TOKENS, streams);
        const before = best.get(variant.label);
        if (!before || run.tokensPerSecond > before.tokensPerSecond) best.set(variant.label, run);
      }
    }
    for (const { variant } of running) {
      const run = best.get(variant.label)!;
      table.push({ busy, label: variant.label, streams, run });
      print(`  ${variant.label}, ${streams} stream${streams > 1 ? 's' : ''}: ${run.tokensPerSecond.toFixed(1)} tok/s`);
    }
  }
  for (const { server } of running) await server.stop();
  started.length = 0;
  stopSpinners();
}

print('');
const reference = 'binary' in native ? 'native, defaults' : `engine -t ${all} (poll 50, the default)`;
print(`| busy processes | variant | ${STREAMS.map((streams) => `${streams} stream${streams > 1 ? 's' : ''}`).join(' | ')} |`);
print(`| --- | --- | ${STREAMS.map(() => '---').join(' | ')} |`);
for (const busy of BUSY) {
  for (const variant of variants) {
    const cells = STREAMS.map((streams) => {
      const run = table.find((row) => row.busy === busy && row.label === variant.label && row.streams === streams)!.run;
      const base = table.find((row) => row.busy === busy && row.label === reference && row.streams === streams)!.run;
      return `${run.tokensPerSecond.toFixed(0)} tok/s (${(run.tokensPerSecond / base.tokensPerSecond).toFixed(2)})`;
    });
    print(`| ${busy} | ${variant.label} | ${cells.join(' | ')} |`);
  }
}
print('');
print(`ratios in brackets are to "${reference}" in the same condition; load average at end: ${loadAverages()}`);
process.exit(0);
