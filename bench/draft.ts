/**
 * `npm run bench:draft`: speculative decoding on the llama-server engine at one stream. A generated
 * pair: the draft is the `small` network with 2 blocks, the target the same with 6 more blocks
 * whose output projections are zero, so the target writes exactly what the draft proposes at four
 * times its cost. Tokens/s of the target alone and with its draft, 128 tokens at temperature 0,
 * the CPU, all cores, on the quick build and, when it is built (`hearth engine build --native`),
 * the native one. HEARTH_BENCH_RUNS (default 3) repeats each case; medians are printed.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine, type EngineOptions } from '../companion/src/inference/engine.js';
import { ServerBuild } from '../companion/src/inference/server/build-service.js';
import { NativeBuild } from '../companion/src/inference/server/native-service.js';
import type { GenerationRequest, ModelFile } from '../companion/src/inference/types.js';
import { chooseDraft } from '../companion/src/models/draft-vocabulary.js';
import { writeTinyModel } from '../scripts/gguf/write-model.js';
import { engineOptions, generationRequest } from '../tests/helpers/generation.js';
import { median } from './streams.js';

const RUNS = Number(process.env.HEARTH_BENCH_RUNS ?? 3);
const TOKENS = 128;
const print = (line: string) => process.stdout.write(`${line}\n`);

const root = mkdtempSync(join(tmpdir(), 'hearth-bench-draft-'));
const files = { draft: join(root, 'draft.gguf'), target: join(root, 'target.gguf') };
await writeTinyModel(files.draft, { size: 'small', blocks: 2 });
await writeTinyModel(files.target, { size: 'small', blocks: 2, zeroExtraBlocks: 6 });
const model: ModelFile = { id: 'target', path: files.target, sizeBytes: statSync(files.target).size, capabilities: ['chat'] };
const build = new ServerBuild();
const native = new NativeBuild(build);
type Binary = 'quick' | 'native';

function options(draft: boolean, binary: Binary): EngineOptions {
  return engineOptions({
    engine: 'server',
    build,
    ...(binary === 'native' ? { native } : {}),
    runDir: mkdtempSync(join(root, 'run-')),
    threads: Number(process.env.HEARTH_BENCH_THREADS ?? availableParallelism()),
    ...(draft ? { overrides: { target: { draft: 'draft' } } } : {}),
    chooseDraft: (modelPath, id) => chooseDraft(modelPath, id, (name) => Promise.resolve(name === 'draft' ? files.draft : undefined)),
  });
}

const request = (): GenerationRequest =>
  generationRequest('target', { text: 'Tell me about the water in the house', maxTokens: TOKENS, sampling: { seed: 1, temperature: 0 } });

async function measure(draft: boolean, binary: Binary): Promise<{ tokensPerSecond: number; text: string; acceptance?: number }> {
  const engine = new Engine(options(draft, binary));
  try {
    await engine.run(model, { ...request(), maxTokens: 1 });
    const rates: number[] = [];
    let text = '';
    for (let run = 0; run < RUNS; run++) {
      const started = performance.now();
      const result = await engine.run(model, request());
      rates.push(result.completionTokens / ((performance.now() - started) / 1000));
      text = result.text;
    }
    const status = engine.status()[0]?.draft;
    const acceptance = status && 'model' in status && status.tokens > 0 ? status.accepted / status.tokens : undefined;
    return { tokensPerSecond: median(rates), text, ...(acceptance !== undefined ? { acceptance } : {}) };
  } finally {
    await engine.close();
  }
}

const binaries: Binary[] = native.binary() ? ['quick', 'native'] : ['quick'];
print(
  `speculative decoding, generated small pair (draft 2 blocks, target 8), ${TOKENS} tokens, 1 stream, ${binaries.join(' and ')} build${binaries.length > 1 ? 's' : ''}; load ${loadavg()[0]!.toFixed(2)}`,
);
if (binaries.length === 1) print('(the native build is not built here: `npm run hearth -- engine build --native` adds it)');
print(`| build | case | tokens/s | acceptance |`);
print(`|---|---|---|---|`);
const outcomes: string[] = [];
for (const binary of binaries) {
  const plain = await measure(false, binary);
  const drafted = await measure(true, binary);
  print(`| ${binary} | target alone | ${plain.tokensPerSecond.toFixed(1)} | |`);
  print(`| ${binary} | target + draft | ${drafted.tokensPerSecond.toFixed(1)} | ${((drafted.acceptance ?? 0) * 100).toFixed(0)}% |`);
  outcomes.push(`${binary}: speed-up ${(drafted.tokensPerSecond / plain.tokensPerSecond).toFixed(2)}x, same text: ${plain.text === drafted.text}`);
}
print(`${outcomes.join('; ')}; load ${loadavg()[0]!.toFixed(2)}`);
