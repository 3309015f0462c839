import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelFile } from '../../companion/src/inference/types.js';
import { writeTinyModel, type TinyModelOptions } from '../../scripts/gguf/write-model.js';
import { writeTinyProjector } from '../../scripts/gguf/write-projector.js';
import { tempFolder } from './temp.js';

// Kept in generation.ts, which a benchmark can import (this file registers vitest hooks through temp.ts).
export { generationRequest } from './generation.js';

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

let audio: Promise<{ model: string; projector: string }> | undefined;

/**
 * The tiny chat model with a sound projector beside it (`npm run model:tiny -- OUT --audio`), in a
 * folder of their own: `tiny-audio.gguf` and `mmproj-tiny-audio.gguf`, which discovery pairs, so a
 * server on that folder lists `tiny-audio` with the capability `audio`. The projector (Ultravox's
 * type, an audio encoder only) makes a sound of up to 30 seconds `projectorAudioTokens` tokens of the
 * model's context; it runs on the llama-server engine only. tinyWav() (sounds.ts) makes a sound to send.
 */
export function tinyAudioModelPaths(): Promise<{ model: string; projector: string }> {
  audio ??= (async () => {
    const folder = tempFolder('audio-model');
    const model = join(folder, 'tiny-audio.gguf');
    const projector = join(folder, 'mmproj-tiny-audio.gguf');
    await writeTinyModel(model, { size: 'tiny', seed });
    await writeTinyProjector(projector, { size: 'tiny', seed, vision: false, audio: true });
    return { model, projector };
  })();
  return audio;
}
