import { join } from 'node:path';
import { writeTinyModel } from '../../scripts/gguf/write-model.js';
import { tempFolder } from './temp.js';

const seed = 1;
let pending: Promise<string> | undefined;

/*
 * Generated once per test file (a few milliseconds) into a folder removed after it, so a change
 * to the generator can never leave tests on a stale file and no run leaves models behind.
 */
async function generateTinyModel(): Promise<string> {
  const path = join(tempFolder('models'), `tiny-${seed}.gguf`);
  await writeTinyModel(path, { size: 'tiny', seed });
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
