/**
 * wllama (llama.cpp compiled to WebAssembly) running GGUF files stored in this browser.
 * The wasm ships with the app (precached by the service worker), never from a CDN: it is
 * fetched from the app's own origin and handed to wllama as a blob URL, and the CDN
 * "compat" build is switched off.
 */
import type { Wllama as WllamaType } from '@wllama/wllama/esm/index.js';
import wasmUrl from '@wllama/wllama/esm/wasm/wllama.wasm?url';
import { listGguf, openGguf, removeGguf } from './gguf-files';
import { EngineError, type BrowserModel, type EngineChatRequest, type EngineChatResult, type EngineStatus, type LoadProgress, WLLAMA_CONTEXT } from './types';
import { OneModelEngine } from './one-model';
import { readReply } from './reply';

const CONTEXT = WLLAMA_CONTEXT;

export class WllamaEngine extends OneModelEngine<WllamaType> {
  readonly kind = 'wllama' as const;
  #loading: Promise<void> | null = null;
  #wasm: Promise<string> | null = null;

  async status(): Promise<EngineStatus> {
    const simd = WebAssembly.validate(
      new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]),
    );
    const opfs = typeof navigator.storage?.getDirectory === 'function';
    const available = simd && opfs;
    return {
      kind: this.kind,
      available,
      reason: !simd ? 'This browser lacks WebAssembly SIMD, which llama.cpp needs.' : !opfs ? 'This browser cannot store files (no OPFS).' : null,
      details: { simd, opfs, threads: '1', loaded: this.loaded },
    };
  }

  async models(): Promise<BrowserModel[]> {
    return (await listGguf()).map((file) => ({
      engine: this.kind,
      id: file.id,
      name: file.id.replace(/\.gguf$/, ''),
      sizeBytes: file.sizeBytes,
      stored: true,
      runnable: true,
      reason: null,
      origin: file.origin,
    }));
  }

  async load(model: string, onProgress: (progress: LoadProgress) => void): Promise<void> {
    if (this.loaded === model && this.instance) return;
    if (this.#loading) await this.#loading.catch(() => undefined);
    if (this.loaded === model && this.instance) return;
    this.#loading = this.#load(model, onProgress);
    try {
      await this.#loading;
    } finally {
      this.#loading = null;
    }
  }

  async #load(model: string, onProgress: (progress: LoadProgress) => void): Promise<void> {
    await this.unload();
    onProgress({ fraction: null, text: `Opening ${model}` });
    const file = await openGguf(model);
    const { Wllama } = await import('@wllama/wllama/esm/index.js');
    const wasm = await this.#wasmBlobUrl();
    const instance = new Wllama({ default: wasm }, { suppressNativeLog: true, logger: quietLogger });
    instance.setCompat(null);
    onProgress({ fraction: null, text: `Loading ${model} into memory` });
    try {
      await instance.loadModel([file], { n_ctx: CONTEXT, n_gpu_layers: 0, n_threads: 1, n_parallel: 1 });
    } catch (error) {
      await instance.exit().catch(() => undefined);
      throw new EngineError(`${model} could not be loaded by llama.cpp: ${(error as Error).message}`, 'load_failed');
    }
    this.instance = instance;
    this.loaded = model;
    onProgress({ fraction: 1, text: `${model} is ready` });
  }

  /** The wasm from the app's origin (the service worker answers offline) as a blob URL. */
  #wasmBlobUrl(): Promise<string> {
    this.#wasm ??= (async () => {
      const response = await fetch(wasmUrl);
      if (!response.ok) throw new EngineError(`The llama.cpp runtime (${wasmUrl}) could not be fetched: HTTP ${response.status}.`, 'load_failed');
      const bytes = await response.arrayBuffer();
      return URL.createObjectURL(new Blob([bytes], { type: 'application/wasm' }));
    })().catch((error: unknown) => {
      this.#wasm = null;
      throw error instanceof EngineError ? error : new EngineError(`The llama.cpp runtime could not be fetched: ${(error as Error).message}`, 'load_failed');
    });
    return this.#wasm;
  }

  async chat(request: EngineChatRequest, onDelta: (text: string) => void, signal: AbortSignal): Promise<EngineChatResult> {
    await this.load(request.model, () => undefined);
    const instance = this.instance!;
    const stream = await instance.createChatCompletion({
      messages: request.messages,
      stream: true,
      abortSignal: signal,
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.top_p !== undefined ? { top_p: request.top_p } : {}),
      // Without a limit the reply may use the rest of the context (llama.cpp stops when it is full).
      ...(request.max_tokens !== undefined ? { max_tokens: request.max_tokens } : {}),
    });
    let result: EngineChatResult;
    try {
      result = await readReply(stream, onDelta, (chunk, into) => {
        if (!chunk.timings) return;
        into.promptTokens = chunk.timings.prompt_n + chunk.timings.cache_n;
        into.completionTokens = chunk.timings.predicted_n;
        into.tokensPerSecond = chunk.timings.predicted_per_second;
      });
    } catch (error) {
      signal.throwIfAborted();
      throw new EngineError(`llama.cpp stopped with an error: ${(error as Error).message}`, 'failed');
    }
    signal.throwIfAborted();
    return result;
  }

  protected close(instance: WllamaType): Promise<void> {
    return instance.exit();
  }

  protected deleteStored(model: string): Promise<void> {
    return removeGguf(model);
  }
}

const quietLogger = {
  debug: () => undefined,
  log: () => undefined,
  warn: (...args: unknown[]) => console.warn('[wllama]', ...args),
  error: (...args: unknown[]) => console.error('[wllama]', ...args),
};
