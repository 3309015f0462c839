import { join } from 'node:path';
import type { GenerationRequest } from '../../companion/src/inference/types.js';
import { writeTinyModel } from '../../scripts/gguf/write-model.js';
import { tempFolder } from './temp.js';

const seed = 1;
const pending = new Map<string, Promise<string>>();

/*
 * Generated once per test file (a few milliseconds) into a folder removed after it, so a change
 * to the generator can never leave tests on a stale file and no run leaves models behind.
 */
async function generateTinyModel(embedding: boolean): Promise<string> {
  const path = join(tempFolder('models'), `tiny-${embedding ? 'embedding-' : ''}${seed}.gguf`);
  await writeTinyModel(path, { size: 'tiny', seed, embedding });
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

/** A plain text generation on `model`: one user message (`text`, default "Hello"), 4 tokens, no tools, no stop words; `extra` overrides. */
export function generationRequest(model: string, extra: Partial<GenerationRequest> & { text?: string } = {}): GenerationRequest {
  const { text = 'Hello', ...rest } = extra;
  return {
    model,
    history: [{ role: 'user', text }],
    maxTokens: 4,
    sampling: {},
    stop: [],
    tools: [],
    toolMode: { type: 'none' },
    output: { type: 'text' },
    signal: new AbortController().signal,
    ...rest,
  };
}
