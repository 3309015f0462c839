/**
 * The image engine in memory (one at a time: image work runs one job at a time), and its share
 * of the memory budget the language models use. Each engine lives in its own thread
 * (thread/engine-thread.ts), so its runs never hold up the event loop, and ending the thread
 * returns all of its memory. Loading a large image model may unload idle language models; they
 * are loaded again once the image model is released.
 */
import { availableParallelism } from 'node:os';
import type { ModelFile } from '../inference/types.js';
import type { Logger } from '../logger.js';
import type { ImageModel } from './registry.js';
import { EngineThread } from './thread/engine-thread.js';
import type { EngineSpec } from './thread/messages.js';

/** What image work needs of the language-model engine (inference/engine.ts). */
export interface LanguageModelMemory {
  reserveMemory(label: string, bytes: number): Promise<{ unloaded: ModelFile[]; residents: string[]; release(): void }>;
  load(info: ModelFile): Promise<unknown>;
  isLoaded(id: string): boolean;
}

interface Held {
  key: string;
  engine: EngineThread;
  release(): void;
  unloaded: ModelFile[];
}

const MB = 1024 * 1024;
/** How long a thread whose engine was released is kept for the next image job (its start costs a second or more). */
const IDLE_THREAD_MS = 60_000;

/** Working memory on top of the weights: ONNX Runtime's arenas and activations. */
export function estimateImageBytes(model: ImageModel, pixels: number): number {
  if (model.engine === 'onnx-sd') return Math.ceil((model.inspection.layout?.bytes ?? 0) * 1.3) + pixels * 64 + 128 * MB;
  if (model.engine === 'esrgan') return model.esrgan.bytes * 4 + 64 * MB;
  return 0;
}

export class LoadedImageEngines {
  private held: Held | undefined;
  /** A started thread with no engine, ended after IDLE_THREAD_MS unused. */
  private idle: { thread: EngineThread; timer: NodeJS.Timeout } | undefined;

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
   * `notice` is told, in words, about language models unloaded to make room; aborting `signal`
   * abandons a load in progress.
   */
  async acquire(
    model: ImageModel,
    pixels: number,
    notice: (text: string) => void,
    options: { scale?: number; signal?: AbortSignal } = {},
  ): Promise<EngineThread> {
    const { scale, signal } = options;
    const key = `${model.id}@${scale ?? ''}`;
    if (this.held?.key === key && this.held.engine.alive) return this.held.engine;
    await this.release();
    const bytes = estimateImageBytes(model, pixels);
    const reservation = await this.memory.reserveMemory(`image model ${model.id}`, bytes);
    for (const info of reservation.unloaded) {
      notice(
        `Unloaded the idle language model ${info.id} to make room for ${model.id} (about ${Math.round(bytes / MB)} MB); it is loaded again when image work ends.`,
      );
    }
    try {
      const engine = await this.load(model, scale, signal);
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
    await this.park(held.engine);
    held.release();
    if (reload) this.reload(held.unloaded);
  }

  /** Releases any engine and ends every thread (shutdown). */
  async close(): Promise<void> {
    await this.release(false);
    const idle = this.idle;
    this.idle = undefined;
    if (idle) {
      clearTimeout(idle.timer);
      await idle.thread.close();
    }
  }

  /** Frees the thread's engine and keeps the thread a while for the next one; a thread that cannot free it is ended. */
  private async park(thread: EngineThread): Promise<void> {
    try {
      await thread.unload();
    } catch {
      await thread.close();
      return;
    }
    const timer = setTimeout(() => {
      if (this.idle?.thread !== thread) return;
      this.idle = undefined;
      void thread.close();
    }, IDLE_THREAD_MS);
    timer.unref();
    this.idle = { thread, timer };
  }

  /** The idle thread when it is still there, or a new one. */
  private thread(): EngineThread {
    const idle = this.idle;
    this.idle = undefined;
    if (idle) clearTimeout(idle.timer);
    return idle?.thread.alive ? idle.thread : new EngineThread();
  }

  private async load(model: ImageModel, scale: number | undefined, signal: AbortSignal | undefined): Promise<EngineThread> {
    let spec: EngineSpec;
    if (model.engine === 'onnx-sd') {
      const layout = model.inspection.layout;
      if (!layout) throw new Error(model.inspection.error ?? `${model.id} cannot be loaded.`);
      const threads = this.threads();
      spec = { kind: 'sd', layout, threads: threads === 'auto' ? availableParallelism() : threads };
    } else if (model.engine === 'esrgan') spec = { kind: 'esrgan', source: model.esrgan, scale: scale ?? 2 };
    else throw new Error(`${model.id} runs without a loaded engine.`);
    const thread = this.thread();
    try {
      await thread.load(spec, signal);
      return thread;
    } catch (error) {
      // A load that failed halfway may leave anything behind: the thread goes with it.
      await thread.close();
      throw error;
    }
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
