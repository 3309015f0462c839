import { randomUUID } from 'node:crypto';
import { mkdir, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTinyModel } from '../../scripts/gguf/write-model.js';

const seed = 1;
const pending = new Map<string, Promise<string>>();

/*
 * Regenerated once per process rather than reused across runs, so a change to the generator
 * can never leave tests on a stale file. Concurrent test files each write a temp file and
 * rename it into place: the rename is atomic, and the content is identical for a given seed.
 */
async function generateTinyModel(embedding: boolean): Promise<string> {
  const folder = join(tmpdir(), 'hearth-test-models');
  await mkdir(folder, { recursive: true });
  const path = join(folder, `tiny-${embedding ? 'embedding-' : ''}${seed}.gguf`);
  const temporary = `${path}.${process.pid}-${randomUUID()}.tmp`;
  await writeTinyModel(temporary, { size: 'tiny', seed, embedding });
  await rename(temporary, path);
  return path;
}

function generated(embedding: boolean): Promise<string> {
  const key = embedding ? 'embedding' : 'chat';
  let path = pending.get(key);
  if (!path) {
    path = generateTinyModel(embedding).catch((error: unknown) => {
      pending.delete(key);
      throw error;
    });
    pending.set(key, path);
  }
  return path;
}

/** Path of the deterministic tiny GGUF test model. */
export function tinyModelPath(): Promise<string> {
  return generated(false);
}

/** Path of the deterministic tiny GGUF embedding model (`npm run model:tiny -- OUT --embedding`). */
export function tinyEmbeddingModelPath(): Promise<string> {
  return generated(true);
}
