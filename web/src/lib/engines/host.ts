/**
 * The page's side of the engine worker: each in-browser engine behind the BrowserEngine
 * interface, its calls carried to the worker. The worker starts on first use.
 */
import type { FromWorker, ToWorker, EngineMethod } from './protocol';
import {
  EngineError,
  type BrowserEngine,
  type BrowserModel,
  type EngineChatRequest,
  type EngineChatResult,
  type EngineKind,
  type EngineStatus,
  type LoadProgress,
} from './types';

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  onDelta?(text: string): void;
  onProgress?(progress: LoadProgress): void;
}

export type WorkerFactory = () => Worker;

const defaultFactory: WorkerFactory = () => new Worker(new URL('./engine.worker.ts', import.meta.url), { type: 'module', name: 'hearth-engines' });

export class EngineHost {
  #worker: Worker | null = null;
  #pending = new Map<number, Pending>();
  #next = 1;

  constructor(private readonly factory: WorkerFactory = defaultFactory) {}

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = this.factory();
    worker.onmessage = (event: MessageEvent<FromWorker>) => this.#receive(event.data);
    worker.onerror = (event) => {
      const error = new EngineError(`The in-browser engine stopped: ${event.message || 'worker error'}`, 'failed');
      for (const pending of this.#pending.values()) pending.reject(error);
      this.#pending.clear();
      this.#worker?.terminate();
      this.#worker = null;
    };
    this.#worker = worker;
    return worker;
  }

  #receive(message: FromWorker): void {
    const pending = this.#pending.get(message.id);
    if (!pending) return;
    if (message.type === 'delta') return pending.onDelta?.(message.text);
    if (message.type === 'progress') return pending.onProgress?.({ fraction: message.fraction, text: message.text });
    this.#pending.delete(message.id);
    if (message.type === 'result') return pending.resolve(message.value);
    if (message.name === 'AbortError') return pending.reject(new DOMException(message.message, 'AbortError'));
    pending.reject(new EngineError(message.message, (message.code as EngineError['code'] | null) ?? 'failed'));
  }

  call<T>(
    engine: EngineKind,
    method: EngineMethod,
    args: unknown[] = [],
    handlers: Omit<Pending, 'resolve' | 'reject'> = {},
    signal?: AbortSignal,
  ): Promise<T> {
    const worker = this.#start();
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const cancel = () => worker.postMessage({ type: 'cancel', id } satisfies ToWorker);
      signal?.addEventListener('abort', cancel, { once: true });
      const done = () => signal?.removeEventListener('abort', cancel);
      this.#pending.set(id, {
        ...handlers,
        resolve: (value) => (done(), resolve(value as T)),
        reject: (error) => (done(), reject(error)),
      });
      worker.postMessage({ type: 'call', id, engine, method, args } satisfies ToWorker);
    });
  }

  engine(kind: EngineKind): BrowserEngine {
    return {
      kind,
      status: () => this.call<EngineStatus>(kind, 'status'),
      models: () => this.call<BrowserModel[]>(kind, 'models'),
      load: (model, onProgress) => this.call<void>(kind, 'load', [model], { onProgress }),
      chat: (request: EngineChatRequest, onDelta, signal) => this.call<EngineChatResult>(kind, 'chat', [request], { onDelta }, signal),
      unload: () => this.call<void>(kind, 'unload'),
      remove: (model) => this.call<void>(kind, 'remove', [model]),
    };
  }
}

let shared: EngineHost | null = null;

/** The app's one engine worker. */
export function engineHost(): EngineHost {
  shared ??= new EngineHost();
  return shared;
}

export const ENGINE_KINDS: EngineKind[] = ['wllama', 'webllm'];
