import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { dataPaths, defaultDataDirectory } from '../companion/src/store/data-dir.js';
import { defaultSeed, modelSizes, writeTinyModel, type ModelSize } from './gguf/write-model.js';

const usage = `Usage: npm run model:tiny -- [OUT.gguf] [--size ${modelSizes.join('|')}] [--seed N] [--data-dir DIR]
Writes a deterministic random-weight GGUF test model (default: --size tiny --seed ${defaultSeed}).
Without OUT it goes into the data folder's models/ (--data-dir, else HEARTH_DATA_DIR, else ~/.hearth)
as SIZE.gguf, so a companion on that data folder lists it as the model "SIZE" (e.g. "tiny").`;

function fail(message: string): never {
  console.error(`${message}\n${usage}`);
  process.exit(2);
}

function readArguments(): { outPath: string; size: ModelSize; seed: number } {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: { size: { type: 'string', default: 'tiny' }, seed: { type: 'string', default: String(defaultSeed) }, 'data-dir': { type: 'string' } },
    });
  } catch (error) {
    fail((error as Error).message);
  }
  const { positionals, values } = parsed;
  if (positionals.length > 1) fail('Expected at most one output path.');
  const size = values.size as ModelSize;
  if (!modelSizes.includes(size)) fail(`Unknown size "${values.size}".`);
  const seed = Number(values.seed);
  if (!/^\d+$/.test(values.seed) || seed > 0xffffffff) fail(`Seed must be an integer from 0 to ${0xffffffff}.`);
  const models = dataPaths(values['data-dir'] ?? process.env.HEARTH_DATA_DIR ?? defaultDataDirectory()).models;
  return { outPath: positionals[0] ?? join(models, `${size}.gguf`), size, seed };
}

const { outPath, size, seed } = readArguments();
mkdirSync(dirname(outPath), { recursive: true });
const { path, bytes } = await writeTinyModel(outPath, { size, seed });
console.log(`${path} ${bytes} bytes (${(bytes / 1e6).toFixed(1)} MB, ${size}, seed ${seed})`);
