/**
 * The image engine in memory (one at a time: image work runs one job at a time), and its share
 * of the memory budget the language models use. Loading a large image model may unload idle
 * language models; they are loaded again once the image model is released.
 */
import { availableParallelism } from 'node:os';
import type { ModelFile } from '../inference/types.js';
import type { Logger } from '../logger.js';
import type { ImageModel } from './registry.js';
import { SdPipeline } from './sd/pipeline.js';
import { EsrganModel } from './upscale/esrgan.js';

/** What image work needs of the language-model engine (inference/engine.ts). */
export interface LanguageModelMemory {
  reserveMemory(label: string, bytes: number): Promise<{ unloaded: ModelFile[]; residents: string[]; release(): void }>;
  load(info: ModelFile): Promise<unknown>;
  isLoaded(id: string): boolean;
}

type Loaded = SdPipeline | EsrganModel;

interface Held {
  key: string;
  engine: Loaded;
  release(): void;
  unloaded: ModelFile[];
}

const MB = 1024 * 1024;

/** Working memory on top of the weights: ONNX Runtime's arenas and activations. */
export function estimateImageBytes(model: ImageModel, pixels: number): number {
  if (model.engine === 'onnx-sd') return Math.ceil((model.inspection.layout?.bytes ?? 0) * 1.3) + pixels * 64 + 128 * MB;
  if (model.engine === 'esrgan') return model.esrgan.bytes * 4 + 64 * MB;
  return 0;
}

export class LoadedImageEngines {
  private held: Held | undefined;

  constructor(
    private readonly memory: LanguageModelMemory,
    private readonly threads: () => number | 'auto',
    private readonly log: Logger,
  ) {}

  isLoaded(id: string): boolean {
    return this.held?.key.split('@')[0] === id;
  }

  /**
   * The engine for `model` (and `scale`, for upscalers), loading it after releasing any other.
   * `notice` is told, in words, about language models unloaded to make room.
   */
  async acquire(model: ImageModel, pixels: number, notice: (text: string) => void, scale?: number): Promise<Loaded> {
    const key = `${model.id}@${scale ?? ''}`;
    if (this.held?.key === key) return this.held.engine;
    await this.release();
    const bytes = estimateImageBytes(model, pixels);
    const reservation = await this.memory.reserveMemory(`image model ${model.id}`, bytes);
    for (const info of reservation.unloaded) {
      notice(
        `Unloaded the idle language model ${info.id} to make room for ${model.id} (about ${Math.round(bytes / MB)} MB); it is loaded again when image work ends.`,
      );
    }
    try {
      const engine = await this.load(model, scale);
      this.held = { key, engine, release: reservation.release, unloaded: reservation.unloaded };
      return engine;
    } catch (error) {
      reservation.release();
      this.reload(reservation.unloaded);
      throw error;
    }
  }

  /**
   * Frees the engine and its memory share (after the last queued job for its model: an idle image
   * model never holds memory a language model may need); language models it displaced are loaded
   * again unless `reload` is false.
   */
  async release(reload = true): Promise<void> {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    if (held.engine instanceof SdPipeline) await held.engine.release();
    else held.engine.dispose();
    held.release();
    if (reload) this.reload(held.unloaded);
  }

  private async load(model: ImageModel, scale: number | undefined): Promise<Loaded> {
    if (model.engine === 'onnx-sd') {
      const layout = model.inspection.layout;
      if (!layout) throw new Error(model.inspection.error ?? `${model.id} cannot be loaded.`);
      const threads = this.threads();
      return SdPipeline.load(layout, threads === 'auto' ? availableParallelism() : threads);
    }
    if (model.engine === 'esrgan') return EsrganModel.load(model.esrgan, scale ?? 2);
    throw new Error(`${model.id} runs without a loaded engine.`);
  }

  private reload(models: ModelFile[]): void {
    for (const info of models) {
      if (this.memory.isLoaded(info.id)) continue;
      this.memory.load(info).then(
        () => this.log.info({ model: info.id }, 'language model loaded again after image work'),
        (error: unknown) => this.log.warn({ model: info.id, err: error }, 'language model could not be loaded again after image work'),
      );
    }
  }
}
