/**
 * The companion's side of an image engine thread (engine-worker.ts, a worker_threads worker that
 * holds at most one loaded engine). Calls go one at a time; progress comes back per tile or step.
 * A run stops within one tile or step of its signal aborting (the shared stop flag); a load
 * cannot be interrupted from inside, so aborting one ends the thread.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { RgbImage } from '../image-io.js';
import type { SdStep } from '../sd/pipeline.js';
import type { DiffusionJob, EngineReply, EngineRequest, EngineSpec } from './messages.js';

// The engine module has the extension this file has: .ts when run through tsx, .js once built.
const ENTRY = new URL(`./engine-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
const START = new URL('./start.mjs', import.meta.url);

type Progress = Extract<EngineReply, { type: 'tile' | 'step' }>;

interface Pending {
  id: number;
  resolve(reply: Extract<EngineReply, { type: 'done' }>): void;
  reject(error: Error): void;
  progress?(reply: Progress): void;
}

export class EngineThread {
  private readonly worker: Worker;
  /** Set to 1 to stop the run in progress between two tiles or steps. */
  private readonly stopFlag = new Int32Array(new SharedArrayBuffer(4));
  private pending: Pending | undefined;
  private nextId = 1;
  private ended: Error | undefined;
  private readonly exited: Promise<void>;

  constructor() {
    this.worker = new Worker(START, { workerData: { entry: ENTRY.href, stop: this.stopFlag }, stdout: false, stderr: false });
    // An idle thread never keeps the process alive; a running job has its request to do that.
    this.worker.unref();
    this.worker.on('message', (reply: EngineReply) => this.receive(reply));
    this.worker.on('error', (error) => this.end(new Error(`The image engine thread failed: ${error.message}`)));
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', (code) => {
        this.end(new Error(`The image engine thread ended (exit code ${code}).`));
        resolve();
      }),
    );
  }

  /** False once the thread ended (closed, or failed). */
  get alive(): boolean {
    return !this.ended;
  }

  /** Loads an engine into the thread; aborting `signal` ends the thread at once (a load cannot stop halfway). */
  async load(spec: EngineSpec, signal?: AbortSignal): Promise<void> {
    const abandon = () => void this.close();
    signal?.addEventListener('abort', abandon, { once: true });
    try {
      signal?.throwIfAborted();
      await this.call({ type: 'load', spec });
      signal?.throwIfAborted();
    } catch (error) {
      throw signal?.aborted ? signal.reason : error;
    } finally {
      signal?.removeEventListener('abort', abandon);
    }
  }

  /** Frees the loaded engine; the thread stays for the next one. */
  async unload(): Promise<void> {
    await this.call({ type: 'release' });
  }

  /** ESRGAN in tiles; `onTile` after each. */
  async upscale(image: RgbImage, run: { signal?: AbortSignal; onTile?(done: number, total: number): void }): Promise<RgbImage> {
    const reply = await this.run({ type: 'upscale', image }, run.signal, (message) => {
      if (message.type === 'tile') run.onTile?.(message.done, message.total);
    });
    return reply.image!;
  }

  /** One Stable Diffusion image; `onStep` after each denoising step. */
  async diffuse(job: DiffusionJob, run: { signal?: AbortSignal; onStep?(step: SdStep): void }): Promise<{ pixels: Uint8Array; steps: number }> {
    const reply = await this.run({ type: 'diffuse', job }, run.signal, (message) => {
      if (message.type === 'step') run.onStep?.(message);
    });
    return { pixels: reply.image!.pixels, steps: reply.steps! };
  }

  /** Ends the thread (and with it everything it holds, WebAssembly memory included). */
  async close(): Promise<void> {
    await this.worker.terminate();
    await this.exited;
  }

  private async run(
    request: DistributiveOmit<Extract<EngineRequest, { type: 'upscale' | 'diffuse' }>, 'id'>,
    signal: AbortSignal | undefined,
    progress: (reply: Progress) => void,
  ): Promise<Extract<EngineReply, { type: 'done' }>> {
    signal?.throwIfAborted();
    Atomics.store(this.stopFlag, 0, 0);
    const stop = () => Atomics.store(this.stopFlag, 0, 1);
    signal?.addEventListener('abort', stop, { once: true });
    try {
      return await this.call(request, progress);
    } catch (error) {
      throw signal?.aborted ? signal.reason : error;
    } finally {
      signal?.removeEventListener('abort', stop);
    }
  }

  private call(request: DistributiveOmit<EngineRequest, 'id'>, progress?: (reply: Progress) => void): Promise<Extract<EngineReply, { type: 'done' }>> {
    if (this.ended) return Promise.reject(this.ended);
    if (this.pending) return Promise.reject(new Error('The image engine thread is busy.'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending = { id, resolve, reject, progress };
      this.worker.postMessage({ ...request, id });
    });
  }

  private receive(reply: EngineReply): void {
    const pending = this.pending;
    if (!pending || pending.id !== reply.id) return;
    if (reply.type === 'tile' || reply.type === 'step') return pending.progress?.(reply);
    this.pending = undefined;
    if (reply.type === 'done') pending.resolve(reply);
    else pending.reject(reply.stopped ? new Error('The image engine stopped between two steps.') : new Error(reply.message));
  }

  private end(error: Error): void {
    this.ended ??= error;
    const pending = this.pending;
    this.pending = undefined;
    pending?.reject(error);
  }
}

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;
