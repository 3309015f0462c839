/**
 * `npm run bench:embeddings`: /v1/embeddings on the generated `small` embedding model, measured
 * side by side in one run: an array of inputs in one call against the same inputs sent one call
 * at a time, for 1, 2 and 4 embedding contexts per model (as many as the cores allow), and one
 * thread against two per context. Every figure is inputs per second; the ratios compare the rows of the same run.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Embeddings } from '../companion/src/inference/embeddings.js';
import { Engine } from '../companion/src/inference/engine.js';
import type { ModelFile } from '../companion/src/inference/types.js';
import { silentLogger } from '../companion/src/logger.js';
import { writeTinyModel } from '../scripts/gguf/write-model.js';

const INPUTS = 16;
const ROUNDS = 3;
const folder = join(tmpdir(), 'hearth-bench');
const path = join(folder, 'models', 'small-embed.gguf');
mkdirSync(join(folder, 'models'), { recursive: true });
if (!existsSync(path)) await writeTinyModel(path, { size: 'small', embedding: true });
const { statSync } = await import('node:fs');
const info: ModelFile = { id: 'small-embed', path, sizeBytes: statSync(path).size, capabilities: ['embedding'] };
const texts = Array.from({ length: INPUTS }, (_, index) => `Sentence number ${index} about the lighthouse keeper, the sea and the long winter nights.`);

async function measure(contexts: number, threads: number): Promise<{ array: number; single: number; held: number }> {
  const engine = new Engine({
    gpu: 'cpu',
    threads,
    contextSize: 512,
    parallel: 1,
    queueLimit: 64,
    idleUnloadSeconds: 0,
    memoryBudgetBytes: 2 ** 32,
    log: silentLogger,
  });
  const embeddings = new Embeddings(engine, () => ({ threads, contextSize: 512, parallel: contexts, queueLimit: 64, idleUnloadSeconds: 0 }), silentLogger);
  try {
    await embeddings.embed(info, texts.slice(0, 2));
    // Hearth holds no more contexts than the cores allow at this thread count.
    const held = engine.status()[0]!.sequences;
    let array = 0;
    let single = 0;
    for (let round = 0; round < ROUNDS; round++) {
      let started = performance.now();
      await embeddings.embed(info, texts);
      array = Math.max(array, (INPUTS * 1000) / (performance.now() - started));
      started = performance.now();
      for (const text of texts) await embeddings.embed(info, [text]);
      single = Math.max(single, (INPUTS * 1000) / (performance.now() - started));
    }
    console.error(`  measured ${held} context(s) x ${threads} thread(s)`);
    return { array, single, held };
  } finally {
    await engine.close();
  }
}

console.log(`${INPUTS} inputs of ~20 tokens, best of ${ROUNDS}, ${cpus().length} cores`);
console.log('contexts  threads  array inputs/s  one-by-one inputs/s  array/one-by-one');
const baseline = await measure(1, 1);
const rows: [number, number, { array: number; single: number; held: number }][] = [[1, 1, baseline]];
for (const [contexts, threads] of [
  [1, 2],
  [2, 1],
  [4, 1],
  [2, 2],
] as const)
  rows.push([contexts, threads, await measure(contexts, threads)]);
for (const [, threads, { array, single, held }] of rows) {
  console.log(
    `${String(held).padStart(8)}  ${String(threads).padStart(7)}  ${array.toFixed(1).padStart(14)}  ${single.toFixed(1).padStart(19)}  ${(array / single).toFixed(2).padStart(16)}   (array vs 1 context 1 thread: ${(array / baseline.array).toFixed(2)}x)`,
  );
}
