import { parseArgs } from 'node:util';
import { defaultSeed, modelSizes, writeTinyModel, type ModelSize } from './gguf/write-model.js';

const usage = `Usage: tsx scripts/model-tiny.ts OUT.gguf [--size ${modelSizes.join('|')}] [--seed N] [--embedding]
Writes a deterministic random-weight GGUF test model (default: --size tiny --seed ${defaultSeed}).
--embedding writes an embedding model (mean pooling, no chat template) for /v1/embeddings.`;

function fail(message: string): never {
  console.error(`${message}\n${usage}`);
  process.exit(2);
}

function readArguments(): { outPath: string; size: ModelSize; seed: number; embedding: boolean } {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        size: { type: 'string', default: 'tiny' },
        seed: { type: 'string', default: String(defaultSeed) },
        embedding: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    fail((error as Error).message);
  }
  const { positionals, values } = parsed;
  const [outPath, ...extra] = positionals;
  if (outPath === undefined || extra.length > 0) fail('Expected exactly one output path.');
  const size = values.size as ModelSize;
  if (!modelSizes.includes(size)) fail(`Unknown size "${values.size}".`);
  const seed = Number(values.seed);
  if (!/^\d+$/.test(values.seed) || seed > 0xffffffff) fail(`Seed must be an integer from 0 to ${0xffffffff}.`);
  return { outPath, size, seed, embedding: values.embedding };
}

const { outPath, size, seed, embedding } = readArguments();
const { path, bytes } = await writeTinyModel(outPath, { size, seed, embedding });
console.log(`${path} ${bytes} bytes (${(bytes / 1e6).toFixed(1)} MB, ${size}${embedding ? ' embedding' : ''}, seed ${seed})`);
