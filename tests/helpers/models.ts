import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelFile } from '../../companion/src/inference/types.js';
import { writeTinyModel, type TinyModelOptions } from '../../scripts/gguf/write-model.js';
import { writeTinyProjector, type TinyProjectorOptions } from '../../scripts/gguf/write-projector.js';
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

type ProjectorKind = 'vision' | 'audio';
const pairs = new Map<ProjectorKind, Promise<{ model: string; projector: string }>>();

/** The tiny chat model and a `kind` projector beside it, generated once per test file into a folder of their own. */
function projectorPair(kind: ProjectorKind, options: TinyProjectorOptions): Promise<{ model: string; projector: string }> {
  let pair = pairs.get(kind);
  if (!pair) {
    pair = (async () => {
      const folder = tempFolder(`${kind}-model`);
      const model = join(folder, `tiny-${kind}.gguf`);
      const projector = join(folder, `mmproj-tiny-${kind}.gguf`);
      await writeTinyModel(model, { size: 'tiny', seed });
      await writeTinyProjector(projector, { size: 'tiny', seed, ...options });
      return { model, projector };
    })();
    pairs.set(kind, pair);
  }
  return pair;
}

/**
 * The tiny chat model with a vision projector beside it (`npm run model:tiny -- OUT --vision`), in a
 * folder of their own: `tiny-vision.gguf` and `mmproj-tiny-vision.gguf`, which discovery pairs. The
 * projector (LLaVA's "mlp" type) makes every image 4 tokens of the model's context.
 */
export function tinyVisionModelPaths(): Promise<{ model: string; projector: string }> {
  return projectorPair('vision', {});
}

/**
 * The tiny chat model with a sound projector beside it (`npm run model:tiny -- OUT --audio`), in a
 * folder of their own: `tiny-audio.gguf` and `mmproj-tiny-audio.gguf`, which discovery pairs, so a
 * server on that folder lists `tiny-audio` with the capability `audio`. The projector (Ultravox's
 * type, an audio encoder only) makes a sound of up to 30 seconds `projectorAudioTokens` tokens of the
 * model's context; it runs on the llama-server engine only. tinyWav() (sounds.ts) makes a sound to send.
 */
export function tinyAudioModelPaths(): Promise<{ model: string; projector: string }> {
  return projectorPair('audio', { vision: false, audio: true });
}

/**
 * Copies the tiny model with its `kind` projector (above) into `dataDir`'s models folder, in a
 * folder of their own: a projector pairs with every model in its folder, and the plain tiny model
 * may be in models/ itself. A server on `dataDir` lists `tiny-vision` or `tiny-audio`.
 */
export async function installProjectorModel(dataDir: string, kind: ProjectorKind): Promise<void> {
  const { model, projector } = await (kind === 'vision' ? tinyVisionModelPaths() : tinyAudioModelPaths());
  const folder = join(dataDir, 'models', kind);
  mkdirSync(folder, { recursive: true });
  copyFileSync(model, join(folder, `tiny-${kind}.gguf`));
  copyFileSync(projector, join(folder, `mmproj-tiny-${kind}.gguf`));
}
