/**
 * `npm run bench:peer`: one workload against raw node-llama-cpp, Hearth over HTTP, and llama-server
 * built from the llama.cpp source node-llama-cpp bundles (with its default flags, and with
 * `--cache-ram 0`, since its prompt cache adds a serial wait to every request). Same generated
 * `small` GGUF, same token counts, 1/4/8/16 streams, a unique prompt and a new connection per
 * request; best of three rounds after a warm-up. Prints tok/s, median first-token time and ratios.
 * Without CMake it says so and compares only raw node-llama-cpp and Hearth.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../companion/src/app.js';
import { silentLogger } from '../companion/src/logger.js';
import { createServices } from '../companion/src/services.js';
import { writeFileAtomic } from '../companion/src/store/files.js';
import { writeTinyModel } from '../scripts/gguf/write-model.js';
import { directRun, openDirect } from './direct.js';
import { llamaServer, startLlamaServer } from './llama-server.js';
import { median, streamsRun, uniquePrompt, type StreamsRun } from './streams.js';

const TOKENS = 128;
const ROUNDS = 3;
const STREAMS = [1, 4, 8, 16];
const CONTEXT = 2048;
const PARALLEL = Math.max(...STREAMS);

const print = (line: string) => process.stdout.write(`${line}\n`);
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

const dataDir = join(tmpdir(), 'hearth-bench-peer');
const modelPath = join(dataDir, 'models', 'small.gguf');
mkdirSync(join(dataDir, 'models'), { recursive: true });
if (!existsSync(modelPath)) await writeTinyModel(modelPath, { size: 'small' });

print(
  `Hearth peer benchmark — ${new Date().toISOString().slice(0, 16)}, ${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
);
print(
  `model: generated small (512 wide, 8 layers, F32); ${TOKENS} tokens per stream, unique prompts, a new connection per request, best of ${ROUNDS} after a warm-up`,
);
print(`load average at start: ${load()}`);

const server = llamaServer(print);
if ('skipped' in server) print(`llama-server: skipped — ${server.skipped}`);

type Best = Record<number, StreamsRun>;
async function measure(label: string, runOnce: (streams: number) => Promise<StreamsRun>): Promise<Best> {
  const best: Best = {};
  for (const streams of STREAMS) {
    await runOnce(streams); // warm-up: loads, measures threads, fills caches
    const runs: StreamsRun[] = [];
    for (let round = 0; round < ROUNDS; round++) runs.push(await runOnce(streams));
    const fastest = runs.reduce((a, b) => (b.tokensPerSecond > a.tokensPerSecond ? b : a));
    best[streams] = { ...fastest, firstTokenMs: median(runs.map((run) => run.firstTokenMs)) };
    print(
      `  ${label}, ${streams} stream${streams > 1 ? 's' : ''}: ${fastest.tokensPerSecond.toFixed(1)} tok/s, first token ${best[streams]!.firstTokenMs.toFixed(0)} ms`,
    );
  }
  return best;
}

// Raw node-llama-cpp: one LlamaChat per sequence, the best thread count for each stream count.
const direct = await openDirect(modelPath, PARALLEL, CONTEXT);
const threadCounts = [...new Set([1, cpus().length])];
const raw = await measure('raw node-llama-cpp', async (streams) => {
  let best: StreamsRun | undefined;
  for (const threads of threadCounts) {
    const run = await directRun(direct, threads, uniquePrompt, TOKENS, streams);
    const result = { tokensPerSecond: run.tokensPerSecond, firstTokenMs: run.firstTokenMs, tokens: 0 };
    if (!best || result.tokensPerSecond > best.tokensPerSecond) best = result;
  }
  return best!;
});
await direct.close();

// Hearth over HTTP, as configured by default apart from the sequence count and context size.
writeFileAtomic(join(dataDir, 'config.yaml'), `version: 1\nmodels:\n  parallel: ${PARALLEL}\n  context_size: ${CONTEXT}\n  external_sources: false\n`);
const services = await createServices({ dataDir, externalSources: false, log: silentLogger, version: 'bench' });
const app = await buildApp({ services, webRoot: '/nonexistent' });
await app.listen({ host: '127.0.0.1', port: 0 });
const hearthUrl = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
const hearth = await measure('Hearth HTTP', (streams) => streamsRun(hearthUrl, 'small', TOKENS, streams));
const choices = services.engine.status()[0]?.threadChoices ?? [];
await app.close();
await services.close();

const peers: Record<string, Best> = {};
if ('binary' in server) {
  const common = ['-m', modelPath, '-np', String(PARALLEL), '-c', String(CONTEXT * PARALLEL)];
  for (const [label, extra] of [
    ['llama-server', []],
    ['llama-server --cache-ram 0', ['--cache-ram', '0']],
  ] as const) {
    const running = await startLlamaServer(server.binary, [...common, ...extra], 18000 + Math.floor(Math.random() * 2000));
    try {
      peers[label] = await measure(label, (streams) => streamsRun(running.url, 'small', TOKENS, streams));
    } finally {
      await running.stop();
    }
  }
}

print('');
print(
  `Hearth's thread choice per batch size (ms per token of each candidate): ${
    choices
      .map(
        (choice) =>
          `${choice.tokens} → ${choice.threads} (${Object.entries(choice.msPerToken)
            .map(([threads, ms]) => `${threads}t ${ms}`)
            .join(', ')})`,
      )
      .join('; ') || 'fixed by config'
  }`,
);
const peerNames = Object.keys(peers);
const row = (cells: string[]) => print(`| ${cells.join(' | ')} |`);
const cell = (run: StreamsRun) => `${run.tokensPerSecond.toFixed(1)} tok/s, ${run.firstTokenMs.toFixed(0)} ms`;
const ratio = (ours: StreamsRun, theirs: StreamsRun) => (ours.tokensPerSecond / theirs.tokensPerSecond).toFixed(2);
const gain = (best: Best) => `${(best[8]!.tokensPerSecond / best[1]!.tokensPerSecond).toFixed(2)}×`;
print('');
row(['streams', 'raw node-llama-cpp', 'Hearth HTTP', ...peerNames, 'Hearth / raw', ...peerNames.map((name) => `Hearth / ${name}`)]);
row(Array.from({ length: 4 + 2 * peerNames.length }, () => '---'));
for (const streams of STREAMS) {
  const ours = hearth[streams]!;
  row([
    String(streams),
    cell(raw[streams]!),
    cell(ours),
    ...peerNames.map((name) => cell(peers[name]![streams]!)),
    ratio(ours, raw[streams]!),
    ...peerNames.map((name) => ratio(ours, peers[name]![streams]!)),
  ]);
}
row(['gain of 8 streams over 1', gain(raw), gain(hearth), ...peerNames.map((name) => gain(peers[name]!)), '', ...peerNames.map(() => '')]);
print('');
print(`load average at end: ${load()} (figures taken while the machine is busy are noisy; compare ratios from one run)`);
process.exit(0);
