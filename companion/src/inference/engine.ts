import { resolveChatWrapper, type Llama, type LlamaContext, type LlamaModel } from 'node-llama-cpp';
import { HearthError } from '../errors.js';
import type { Logger } from '../logger.js';
import { diagnoseLoadFailure } from './diagnose.js';
import { GrammarCache, generate, type ModelRuntime } from './generate.js';
import { loadLlama, measureThreads, threadCandidates, type GpuSetting } from './llama.js';
import { SequencePool } from './pool.js';
import type { GenerationRequest, GenerationResult, ModelFile } from './types.js';

export interface EngineOptions {
  gpu: GpuSetting;
  /** A fixed thread count, or 'auto' to measure per model. */
  threads: number | 'auto';
  contextSize: number;
  /** Sequences per context: concurrent requests to one model are batched across them. */
  parallel: number;
  queueLimit: number;
  idleUnloadSeconds: number;
  memoryBudgetBytes: number;
  /** Remembers measured thread counts across restarts. */
  threadMemory?: { get(key: string): number | undefined; set(key: string, threads: number): void };
  log: Logger;
}

interface Loaded {
  info: ModelFile;
  model: LlamaModel;
  context: LlamaContext;
  runtime: ModelRuntime;
  pool: SequencePool;
  threads: number;
  bytes: number;
  lastUsed: number;
  generatedTokens: number;
  idleTimer?: NodeJS.Timeout;
}

export interface LoadedStatus {
  id: string;
  threads: number;
  contextSize: number;
  sequences: number;
  busy: number;
  queued: number;
  /** Tokens generated since the model was loaded. */
  generatedTokens: number;
}

/** Loads models on first use, batches requests over sequences, unloads on idle or memory pressure. */
export class Engine {
  private readonly loaded = new Map<string, Loaded>();
  private readonly loading = new Map<string, Promise<Loaded>>();
  private readonly failures = new Map<string, { stamp: string; message: string }>();
  /** Generations in progress: closing waits for them, so a model is never disposed under one. */
  private readonly running = new Set<Promise<GenerationResult>>();
  /** Models held outside the chat pool (embedding contexts); see the end of the class. */
  private readonly residents = new Map<string, Resident>();
  private closed = false;

  constructor(private options: EngineOptions) {}

  /** New settings apply to models loaded from now on; loaded ones keep theirs until unloaded. */
  configure(next: Omit<EngineOptions, 'log' | 'threadMemory'>): void {
    this.options = { ...this.options, ...next };
  }

  isLoaded(id: string): boolean {
    return this.loaded.has(id) || this.residents.has(id);
  }

  /** Why a model failed to load, while the file is unchanged. */
  loadError(info: ModelFile): string | undefined {
    const failure = this.failures.get(info.id);
    return failure && failure.stamp === stamp(info) ? failure.message : undefined;
  }

  status(): LoadedStatus[] {
    const residents = [...this.residents.values()].map((resident) => resident.status());
    return [...this.loaded.values()]
      .map((entry) => ({
        id: entry.info.id,
        threads: entry.threads,
        contextSize: entry.runtime.contextSize,
        sequences: entry.pool.capacity,
        busy: entry.pool.busy,
        queued: entry.pool.queued,
        generatedTokens: entry.generatedTokens,
      }))
      .concat(residents);
  }

  async run(info: ModelFile, request: GenerationRequest): Promise<GenerationResult> {
    if (!info.capabilities.includes('chat')) throw new HearthError('model_not_chat', `${info.id} is an embedding model and cannot chat.`, { param: 'model' });
    const entry = await this.load(info);
    this.touch(entry);
    const sequence = await entry.pool.acquire(request.signal);
    const started = performance.now();
    const running = generate(entry.runtime, sequence, request);
    this.running.add(running);
    try {
      const result = await running;
      entry.generatedTokens += result.completionTokens;
      return result;
    } finally {
      this.running.delete(running);
      entry.pool.release(sequence, (performance.now() - started) / 1000);
      this.touch(entry);
    }
  }

  load(info: ModelFile): Promise<Loaded> {
    if (this.closed) return Promise.reject(new HearthError('server_busy', 'The server is shutting down.', { retryAfter: 5 }));
    const ready = this.loaded.get(info.id);
    if (ready) return Promise.resolve(ready);
    const known = this.loadError(info);
    if (known) return Promise.reject(new HearthError('model_load_failed', known, { param: 'model' }));
    let pending = this.loading.get(info.id);
    if (!pending) {
      pending = this.loadNow(info).finally(() => this.loading.delete(info.id));
      this.loading.set(info.id, pending);
    }
    return pending;
  }

  async unload(id: string): Promise<boolean> {
    if (this.residents.has(id)) return this.release(id);
    const entry = this.loaded.get(id);
    if (!entry) return false;
    this.loaded.delete(id);
    clearTimeout(entry.idleTimer);
    entry.pool.rejectWaiting(new HearthError('server_busy', `${id} was unloaded while this request waited. Retry.`, { retryAfter: 1 }));
    await entry.context.dispose();
    await entry.model.dispose();
    this.options.log.info({ model: id }, 'model unloaded');
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.loading.values()]);
    await Promise.allSettled([...this.running]);
    for (const id of [...this.loaded.keys(), ...this.residents.keys()]) await this.unload(id);
  }

  private async loadNow(info: ModelFile): Promise<Loaded> {
    await this.makeRoom(info);
    const log = this.options.log;
    const { llama, model } = await this.openFile(info);
    try {
      const threads = await this.chooseThreads(info, model, llama.cpuMathCores);
      const contextSize = Math.min(this.options.contextSize, model.trainContextSize);
      const context = await model.createContext({ contextSize, sequences: this.options.parallel, threads, batchSize: Math.min(512, contextSize) });
      const runtime: ModelRuntime = { llama, model, wrapper: resolveChatWrapper(model), contextSize: context.contextSize, grammars: new GrammarCache(llama) };
      const entry: Loaded = {
        info,
        model,
        context,
        runtime,
        threads,
        pool: new SequencePool(context, this.options.parallel, this.options.queueLimit),
        bytes: estimateBytes(info),
        lastUsed: Date.now(),
        generatedTokens: 0,
      };
      this.loaded.set(info.id, entry);
      log.info({ model: info.id, threads, contextSize: context.contextSize, sequences: this.options.parallel }, 'model loaded');
      if (this.closed) await this.unload(info.id);
      return entry;
    } catch (error) {
      await model.dispose();
      throw this.contextFailure(info, error);
    }
  }

  private async chooseThreads(info: ModelFile, model: LlamaModel, cores: number): Promise<number> {
    if (this.options.threads !== 'auto') return this.options.threads;
    const key = stamp(info);
    const remembered = this.options.threadMemory?.get(key);
    if (remembered) return remembered;
    const measured = await measureThreads(model, threadCandidates(cores));
    this.options.log.info({ model: info.id, tokensPerSecond: measured.tokensPerSecond, threads: measured.threads }, 'measured thread counts');
    this.options.threadMemory?.set(key, measured.threads);
    return measured.threads;
  }

  /** Unloads idle models, least recently used first, until the new one fits the memory budget. */
  private async makeRoom(info: ModelFile): Promise<void> {
    const needed = estimateBytes(info);
    const budget = this.options.memoryBudgetBytes;
    if (needed > budget) {
      throw new HearthError(
        'model_load_failed',
        `${info.id} needs about ${mb(needed)} MB but the memory budget is ${mb(budget)} MB. Raise models.memory_budget_mb in config.yaml or use a smaller model.`,
        { param: 'model' },
      );
    }
    const held = () => [
      ...[...this.loaded.values()].map((entry) => ({ id: entry.info.id, bytes: entry.bytes, busy: entry.pool.busy, lastUsed: entry.lastUsed })),
      ...[...this.residents.values()].map((resident) => ({ id: resident.id, bytes: resident.bytes, busy: resident.busy(), lastUsed: resident.lastUsed() })),
    ];
    const used = () => held().reduce((sum, entry) => sum + entry.bytes, 0);
    const idle = held()
      .filter((entry) => entry.busy === 0)
      .sort((a, b) => a.lastUsed - b.lastUsed);
    while (used() + needed > budget && idle.length > 0) await this.unload(idle.shift()!.id);
    if (used() + needed > budget) {
      throw new HearthError(
        'server_busy',
        `Loading ${info.id} needs about ${mb(needed)} MB; the models in use leave too little of the ${mb(budget)} MB budget. Retry when they finish.`,
        { retryAfter: 10 },
      );
    }
  }

  // ── Models held outside the chat pool (embedding contexts): the same loader, failure record and memory budget ──

  /**
   * Loads a model file for a context the caller builds and owns (an embedding context), after
   * making room for it in the memory budget; `build` turns the model into a Resident, which then
   * counts against the budget, is listed as loaded, and is disposed by unload(), close() or
   * memory pressure (when idle). A model whose build fails is disposed and its failure remembered.
   */
  async loadResident(info: ModelFile, build: (llama: Llama, model: LlamaModel) => Promise<Resident>): Promise<Resident> {
    if (this.closed) throw new HearthError('server_busy', 'The server is shutting down.', { retryAfter: 5 });
    const known = this.loadError(info);
    if (known) throw new HearthError('model_load_failed', known, { param: 'model' });
    await this.makeRoom(info);
    const { llama, model } = await this.openFile(info);
    let resident: Resident;
    try {
      resident = await build(llama, model);
    } catch (error) {
      await model.dispose();
      throw this.contextFailure(info, error);
    }
    this.residents.set(info.id, resident);
    if (this.closed) await this.release(info.id);
    return resident;
  }

  private async release(id: string): Promise<boolean> {
    const resident = this.residents.get(id);
    if (!resident) return false;
    this.residents.delete(id);
    await resident.dispose();
    this.options.log.info({ model: id }, 'model unloaded');
    return true;
  }

  /** A model whose context could not be created: remembered while the file is unchanged. */
  private contextFailure(info: ModelFile, error: unknown): HearthError {
    if (error instanceof HearthError) return error;
    const message = `${info.id} loaded but its context could not be created: ${error instanceof Error ? error.message : String(error)}`;
    this.failures.set(info.id, { stamp: stamp(info), message });
    return new HearthError('model_load_failed', message, { param: 'model' });
  }

  /** llama.loadModel with the reason of a failure diagnosed and remembered while the file is unchanged. */
  private async openFile(info: ModelFile): Promise<{ llama: Llama; model: LlamaModel }> {
    const llama = await loadLlama(this.options.gpu);
    try {
      return { llama, model: await llama.loadModel({ modelPath: info.path }) };
    } catch (error) {
      const reason = (await diagnoseLoadFailure(info.path)) ?? (error instanceof Error ? error.message : String(error));
      const message = `${info.id} could not be loaded from ${info.path}: ${reason}`;
      this.failures.set(info.id, { stamp: stamp(info), message });
      this.options.log.error({ model: info.id, err: error }, 'model load failed');
      throw new HearthError('model_load_failed', message, { param: 'model' });
    }
  }

  private touch(entry: Loaded): void {
    entry.lastUsed = Date.now();
    clearTimeout(entry.idleTimer);
    if (this.options.idleUnloadSeconds <= 0) return;
    entry.idleTimer = setTimeout(() => {
      if (entry.pool.busy === 0 && this.loaded.get(entry.info.id) === entry) void this.unload(entry.info.id);
      else this.touch(entry);
    }, this.options.idleUnloadSeconds * 1000);
    entry.idleTimer.unref();
  }
}

/** A model loaded through loadResident: what the engine needs to account for it and let it go. */
export interface Resident {
  id: string;
  /** Its share of the memory budget. */
  bytes: number;
  busy(): number;
  lastUsed(): number;
  status(): LoadedStatus;
  /** Frees its contexts and the model; called once, by the engine. */
  dispose(): Promise<void>;
}

function stamp(info: ModelFile): string {
  return `${info.path}:${info.sizeBytes}`;
}

/** Weights plus a margin for the context and compute buffers. */
export function estimateBytes(info: ModelFile): number {
  return Math.ceil(info.sizeBytes * 1.2) + 64 * 1024 * 1024;
}

function mb(bytes: number): number {
  return Math.round(bytes / (1024 * 1024));
}
