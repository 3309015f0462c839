/**
 * The generated `small` model the HTTP benchmarks share: written once into a folder of the
 * system's temp folder and kept there between runs.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTinyModel } from '../scripts/gguf/write-model.js';

/** The folder it is kept in (a models folder a benchmark's config can name). */
export const BENCH_MODELS = join(tmpdir(), 'hearth-bench-models');

/** The model's path, generated the first time. */
export async function smallModel(): Promise<string> {
  const path = join(BENCH_MODELS, 'small.gguf');
  mkdirSync(BENCH_MODELS, { recursive: true });
  if (!existsSync(path)) await writeTinyModel(path, { size: 'small' });
  return path;
}
