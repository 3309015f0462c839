/**
 * `npm run bench:slot-restore`: the first turn of a conversation after its model's llama-server
 * process restarted (the engine closed and started again, as when Hearth restarts or reloads the
 * model for new load settings). Three cases, first-token time of that turn (the model already
 * loaded by a short unrelated request, so load time is not counted):
 * - RAM-cache hit: the same process, no restart (the ceiling);
 * - restored: after a restart, the conversation's slot saved at close and restored from disk;
 * - re-read: after a restart without saved slots (what Hearth did before).
 * The generated `small` model (its context is 2,048 tokens: a ~1,800-token history), one sequence,
 * the CPU. HEARTH_BENCH_RUNS (default 5) repeats each case; medians are printed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Engine, type EngineOptions } from '../companion/src/inference/engine.js';
import { ServerBuild } from '../companion/src/inference/server/build-service.js';
import type { GenerationRequest, HistoryItem, ModelFile } from '../companion/src/inference/types.js';
import { engineOptions, generationRequest } from '../tests/helpers/generation.js';
import { median } from './streams.js';

const RUNS = Number(process.env.HEARTH_BENCH_RUNS ?? 5);
const print = (line: string) => process.stdout.write(`${line}\n`);

const root = mkdtempSync(join(tmpdir(), 'hearth-bench-restore-'));
const modelPath = join(root, 'small.gguf');
const repo = fileURLToPath(new URL('..', import.meta.url));
execFileSync(process.execPath, [join(repo, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(repo, 'scripts', 'model-tiny.ts'), modelPath, '--size', 'small'], {
  stdio: 'ignore',
});
const model: ModelFile = { id: 'small', path: modelPath, sizeBytes: statSync(modelPath).size, capabilities: ['chat'] };
const build = new ServerBuild();

function options(runDir: string): EngineOptions {
  return engineOptions({ engine: 'server', build, runDir, threads: 'auto', contextSize: 2048, memoryBudgetBytes: 2 ** 32 });
}

function request(history: HistoryItem[], onFirst?: () => void): GenerationRequest {
  let first = true;
  return generationRequest('small', {
    history,
    sampling: { temperature: 0, seed: 1 },
    onText: () => {
      if (first) onFirst?.();
      first = false;
    },
  });
}

/** Milliseconds until the first text of a turn. */
async function firstToken(engine: Engine, history: HistoryItem[]): Promise<number> {
  const start = performance.now();
  let at = NaN;
  await engine.run(
    model,
    request(history, () => (at = performance.now() - start)),
  );
  return at;
}

const words = 'the of and to in is you that it he was for on are as with his they at be this have from or one had by word but not what all were'.split(' ');
const system: HistoryItem = { role: 'system', text: Array.from({ length: 1500 }, (_, index) => words[(index * 7) % words.length]).join(' ') };
const history: HistoryItem[] = [system, { role: 'user', text: 'First question' }, { role: 'assistant', text: 'First answer', toolCalls: [] }];
const next: HistoryItem[] = [...history, { role: 'user', text: 'Second question' }];

print(
  `slot restore after a restart — ${new Date().toISOString().slice(0, 16)}, ${cpus().length} × ${cpus()[0]?.model.trim()}, load ${loadavg()[0]!.toFixed(2)}`,
);
const results: Record<string, number[]> = { 'RAM-cache hit': [], restored: [], 're-read': [] };
let promptTokens = 0;
for (let run = 0; run < RUNS; run++) {
  const runDir = mkdtempSync(join(root, 'run-'));
  const first = new Engine(options(runDir));
  const counted = await first.run(model, request(history));
  promptTokens = counted.promptTokens;
  results['RAM-cache hit']!.push(await firstToken(first, next));
  await first.close();
  // Restored: the saved slot holds `history` and the next turn (saved at close).
  const again = new Engine(options(runDir));
  await again.run(model, request([{ role: 'user', text: 'warm up' }]));
  results.restored!.push(await firstToken(again, [...next, { role: 'assistant', text: 'x', toolCalls: [] }, { role: 'user', text: 'Third' }]));
  await again.close();
  const cold = new Engine(options(mkdtempSync(join(root, 'cold-'))));
  await cold.run(model, request([{ role: 'user', text: 'warm up' }]));
  results['re-read']!.push(await firstToken(cold, [...next, { role: 'assistant', text: 'x', toolCalls: [] }, { role: 'user', text: 'Third' }]));
  await cold.close();
}
print(`history ≈ ${promptTokens} tokens; ${RUNS} runs; median first-token time of the turn:`);
const hit = median(results['RAM-cache hit']!);
for (const [name, values] of Object.entries(results)) {
  const value = median(values);
  print(`  ${name.padEnd(14)} ${value.toFixed(0).padStart(6)} ms   ${(value / hit).toFixed(2)}× the RAM-cache hit`);
}
