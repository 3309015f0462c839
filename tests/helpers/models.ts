import { randomUUID } from 'node:crypto';
import { mkdir, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTinyModel } from '../../scripts/gguf/write-model.js';

const seed = 1;
let pending: Promise<string> | undefined;

/*
 * Regenerated once per process rather than reused across runs, so a change to the generator
 * can never leave tests on a stale file. Concurrent test files each write a temp file and
 * rename it into place: the rename is atomic, and the content is identical for a given seed.
 */
async function generateTinyModel(): Promise<string> {
  const folder = join(tmpdir(), 'hearth-test-models');
  await mkdir(folder, { recursive: true });
  const path = join(folder, `tiny-${seed}.gguf`);
  const temporary = `${path}.${process.pid}-${randomUUID()}.tmp`;
  await writeTinyModel(temporary, { size: 'tiny', seed });
  await rename(temporary, path);
  return path;
}

/** Path of the deterministic tiny GGUF test model. */
export function tinyModelPath(): Promise<string> {
  pending ??= generateTinyModel().catch((error: unknown) => {
    pending = undefined;
    throw error;
  });
  return pending;
}
