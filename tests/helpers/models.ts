import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { GenerationRequest, ModelFile } from '../../companion/src/inference/types.js';
import { writeTinyModel, type TinyModelOptions } from '../../scripts/gguf/write-model.js';
import { writeTinyProjector } from '../../scripts/gguf/write-projector.js';
import { tempFolder } from './temp.js';

const seed = 1;
const pending = new Map<string, Promise<string>>();

/** The generated test models: the chat model, and the same network in other shapes. */
const variants = {
  chat: {},
  embedding: { embedding: true },
  fim: { fim: true },
  thinking: { thinking: true },
} satisfies Record<string, TinyModelOptions>;

type Variant = keyof typeof variants;

/*
 * Generated once per test file (a few milliseconds) into a folder removed after it, so a change
 * to the generator can never leave tests on a stale file and no run leaves models behind.
 */
async function generateTinyModel(variant: Variant): Promise<string> {
  const path = join(tempFolder('models'), `tiny-${variant === 'chat' ? '' : `${variant}-`}${seed}.gguf`);
  await writeTinyModel(path, { size: 'tiny', seed, ...variants[variant] });
  return path;
}

function generated(variant: Variant): Promise<string> {
  let path = pending.get(variant);
  if (!path) {
    path = generateTinyModel(variant).catch((error: unknown) => {
      pending.delete(variant);
      throw error;
    });
    pending.set(variant, path);
  }
  return path;
}

/** Path of the deterministic tiny GGUF test model. */
export function tinyModelPath(): Promise<string> {
  return generated('chat');
}

/** The tiny test model as the engine takes it: id `tiny`, chat and tools unless `capabilities` say otherwise. */
export async function tinyModelFile(capabilities: ModelFile['capabilities'] = ['chat', 'tools']): Promise<ModelFile> {
  const path = await tinyModelPath();
  return { id: 'tiny', path, sizeBytes: statSync(path).size, capabilities };
}

/** Path of the deterministic tiny GGUF embedding model (`npm run model:tiny -- OUT --embedding`). */
export function tinyEmbeddingModelPath(): Promise<string> {
  return generated('embedding');
}

/** Path of the tiny chat model with fill-in-the-middle tokens (`<|fim_prefix|>` ..., their ids in the metadata). */
export function tinyFimModelPath(): Promise<string> {
  return generated('fim');
}

/**
 * Path of the tiny model whose chat format has a thought segment (`writeTinyModel`'s `thinking`):
 * the generation prompt opens `<think>`, and its random weights never close it, so a test ends the
 * thought with a token budget.
 */
export function tinyThinkingModelPath(): Promise<string> {
  return generated('thinking');
}

let vision: Promise<{ model: string; projector: string }> | undefined;

/**
 * The tiny chat model with a vision projector beside it (`npm run model:tiny -- OUT --vision`), in a
 * folder of their own: `tiny-vision.gguf` and `mmproj-tiny-vision.gguf`, which discovery pairs. The
 * projector (LLaVA's "mlp" type) makes every image 4 tokens of the model's context.
 */
export function tinyVisionModelPaths(): Promise<{ model: string; projector: string }> {
  vision ??= (async () => {
    const folder = tempFolder('vision-model');
    const model = join(folder, 'tiny-vision.gguf');
    const projector = join(folder, 'mmproj-tiny-vision.gguf');
    await writeTinyModel(model, { size: 'tiny', seed });
    await writeTinyProjector(projector, { size: 'tiny', seed });
    return { model, projector };
  })();
  return vision;
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
