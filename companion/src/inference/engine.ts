import { freemem } from 'node:os';
import { resolveChatWrapper, type Llama, type LlamaContext, type LlamaContextSequence, type LlamaModel } from 'node-llama-cpp';
import { HearthError } from '../errors.js';
import type { Logger } from '../logger.js';
import { diagnoseLoadFailure } from './diagnose.js';
import { GrammarCache, generate, preparePrompt, type ModelRuntime } from './generate.js';
import { BatchSteps, secondsUntilFirstFree, type StepListener } from './batch-steps.js';
import { loadLlama, threadCandidates, type GpuSetting } from './llama.js';
import { defaultParallel } from './parallel.js';
import { SequencePool } from './pool.js';
import { ThreadTuner, type ThreadChoice } from './thread-tuner.js';
import type { GenerationRequest, GenerationResult, ModelFile } from './types.js';

export interface EngineOptions {
  gpu: GpuSetting;
  /** A fixed thread count, or 'auto' to choose per batch size by measuring (see ThreadTuner). */
  threads: number | 'auto';
  contextSize: number;
  /** Sequences per context: concurrent requests to one model are batched across them. 'auto' follows model size and memory. */
  parallel: number | 'auto';
  queueLimit: number;
  idleUnloadSeconds: number;
  memoryBudgetBytes: number;
  /** Remembers the thread count chosen for one-token decodes across restarts: the next trial starts there. */
  threadMemory?: { get(key: string): number | undefined; set(key: string, threads: number): void };
  log: Logger;
  /** Load progress for the app's status stream (see `LoadEvent`). */
  onLoad?: (event: LoadEvent) => void;
}

/** A model's load: weights read (fraction 0..1, from node-llama-cpp's onLoadProgress), then ready or failed. */
export type LoadEvent = { id: string; state: 'loading'; fraction: number } | { id: string; state: 'ready' } | { id: string; state: 'failed'; message: string };

interface Loaded {
  info: ModelFile;
  model: LlamaModel;
  context: LlamaContext;
  runtime: ModelRuntime;
  pool: SequencePool;
  threads: number;
  tuner?: ThreadTuner;
  steps: BatchSteps;
  running: Set<Running>;
  /** Typical completion length lately, for the wait estimate. */
  typicalTokens?: number;
  bytes: number;
  lastUsed: number;
  generatedTokens: number;
  idleTimer?: NodeJS.Timeout;
}

interface Running {
  sequence: LlamaContextSequence;
  outputBefore: number;
  limit: number;
}

export interface LoadedStatus {
  id: string;
  /** The most threads a decode may use. */
  threads: number;
  /** With threads: auto, the count chosen per batch size and what each candidate measured. */
  threadChoices: ThreadChoice[];
  /** Decode steps since the model was loaded. */
  steps: number;
  contextSize: number;
  sequences: number;
  busy: number;
  queued: number;
  /** Tokens generated since the model was loaded (counted as they stream). */
  generatedTokens: number;
  /** Weights plus context state, as llama.cpp reports them (an embedding model: its share of the budget). */
  memoryBytes?: number;
}

/** Loads models on first use, batches requests over sequences, unloads on idle or memory pressure. */
export class Engine {
  private readonly loaded = new Map<string, Loaded>();
  private readonly loading = new Map<string, Promise<Loaded>>();
  private readonly failures = new Map<string, { stamp: string; message: string }>();
  /** Generations in progress: closing waits for them, so a model is never disposed under one. */
  private readonly generations = new Set<Promise<GenerationResult>>();
  /** Models held outside the chat pool (embedding contexts); see the end of the class. */
  private readonly residents = new Map<string, Resident>();
  private closed = false;

  constructor(private options: EngineOptions) {}

  /** New settings apply to models loaded from now on; loaded ones keep theirs until unloaded. */
  configure(next: Omit<EngineOptions, 'log' | 'threadMemory'>): void {
    this.options = { ...this.options, ...next };
  }

  /** The budget `makeRoom` loads against. */
  get memoryBudgetBytes(): number {
    return this.options.memoryBudgetBytes;
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
    // An embedding model's memory is its share of the budget.
    const residents = [...this.residents.values()].map((resident) => ({ memoryBytes: resident.bytes, ...resident.status() }));
    return [...this.loaded.values()]
      .map((entry) => ({
        id: entry.info.id,
        threads: entry.threads,
        threadChoices: entry.tuner?.choices() ?? [],
        steps: entry.steps.count,
        contextSize: entry.runtime.contextSize,
        sequences: entry.pool.capacity,
        busy: entry.pool.busy,
        queued: entry.pool.queued,
        generatedTokens: entry.generatedTokens,
        memoryBytes: entry.model.size + entry.context.stateSize,
      }))
      .concat(residents);
  }

  async run(info: ModelFile, request: GenerationRequest): Promise<GenerationResult> {
    if (!info.capabilities.includes('chat')) throw new HearthError('model_not_chat', `${info.id} is an embedding model and cannot chat.`, { param: 'model' });
    const entry = await this.load(info);
    this.touch(entry);
    const prompt = preparePrompt(entry.runtime, request);
    const sequence = await entry.pool.acquire(request.signal, prompt.tokens);
    const running: Running = { sequence, outputBefore: sequence.tokenMeter.usedOutputTokens, limit: request.maxTokens ?? entry.runtime.contextSize };
    entry.running.add(running);
    // Streamed pieces count at once (for the live tokens/s figure); the exact count replaces them at the end.
    let streamed = 0;
    const forward = request.onText;
    const onText = forward
      ? (delta: string) => {
          streamed++;
          entry.generatedTokens++;
          forward(delta);
        }
      : undefined;
    const generation = generate(entry.runtime, sequence, { ...request, onText }, prompt);
    this.generations.add(generation);
    try {
      const result = await generation;
      entry.generatedTokens += result.completionTokens - streamed;
      streamed = 0;
      if (result.finishReason !== 'cancelled') entry.typicalTokens = blend(entry.typicalTokens, result.completionTokens);
      return result;
    } finally {
      this.generations.delete(generation);
      entry.generatedTokens -= streamed;
      entry.running.delete(running);
      entry.pool.release(sequence);
      this.touch(entry);
    }
  }

  /**
   * Calls `listener` after every decode step of a loaded model, with the ids of the sequences it
   * advanced; `sequenceOf` maps a running request's sequence to that id. Returns the unsubscribe.
   */
  observeSteps(id: string, listener: StepListener): () => void {
    const entry = this.loaded.get(id);
    if (!entry) throw new Error(`${id} is not loaded`);
    return entry.steps.observe(listener);
  }

  /** The context's sequence ids of the requests running on a model now, in the order they started. */
  runningSequences(id: string): number[] {
    const entry = this.loaded.get(id);
    return entry ? [...entry.running].map((running) => entry.pool.idOf(running.sequence)!) : [];
  }

  load(info: ModelFile): Promise<Loaded> {
    if (this.closed) return Promise.reject(new HearthError('server_busy', 'The server is shutting down.', { retryAfter: 5 }));
    const ready = this.loaded.get(info.id);
    if (ready) return Promise.resolve(ready);
    const known = this.loadError(info);
    if (known) return Promise.reject(new HearthError('model_load_failed', known, { param: 'model' }));
    let pending = this.loading.get(info.id);
    if (!pending) {
      pending = this.reportLoad(info.id, this.loadNow(info)).finally(() => this.loading.delete(info.id));
      this.loading.set(info.id, pending);
    }
    return pending;
  }

  private reportLoad(id: string, loading: Promise<Loaded>): Promise<Loaded> {
    const report = this.options.onLoad;
    if (!report) return loading;
    report({ id, state: 'loading', fraction: 0 });
    return loading.then(
      (entry) => {
        report({ id, state: 'ready' });
        return entry;
      },
      (error: unknown) => {
        report({ id, state: 'failed', message: error instanceof Error ? error.message : String(error) });
        throw error;
      },
    );
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
    await Promise.allSettled([...this.generations]);
    for (const id of [...this.loaded.keys(), ...this.residents.keys()]) await this.unload(id);
  }

  private async loadNow(info: ModelFile): Promise<Loaded> {
    await this.makeRoom(info.id, estimateBytes(info));
    const log = this.options.log;
    const onLoad = this.options.onLoad;
    const { llama, model } = await this.openFile(info, onLoad && ((fraction) => onLoad({ id: info.id, state: 'loading', fraction })));
    try {
      const tuner = this.threadTuner(info, llama.cpuMathCores);
      const threads = tuner?.maxThreads ?? (this.options.threads as number);
      const contextSize = Math.min(this.options.contextSize, model.trainContextSize);
      const batchSize = Math.min(512, contextSize);
      const perSequence = bytesPerSequence(model, contextSize, batchSize);
      const parallel = this.options.parallel === 'auto' ? await this.autoParallel(llama, model, info, perSequence) : this.options.parallel;
      const steps = new BatchSteps();
      const context = await model.createContext({
        contextSize,
        sequences: parallel,
        threads,
        batchSize,
        batching: {
          threadsForBatch: tuner ? (tokens) => tuner.threadsFor(tokens) : undefined,
          onBatchDecoded: (step) => {
            const stepMs = steps.record(step);
            tuner?.record({ ...step, stepMs });
          },
        },
      });
      if (!batchingPatched(context))
        log.warn(
          { model: info.id },
          'node-llama-cpp is not patched (run: node scripts/patch-dependencies.mjs): concurrent requests will decode in several passes',
        );
      const runtime: ModelRuntime = { llama, model, wrapper: resolveChatWrapper(model), contextSize: context.contextSize, grammars: new GrammarCache(llama) };
      const running = new Set<Running>();
      const entry: Loaded = {
        info,
        model,
        context,
        runtime,
        threads,
        tuner,
        steps,
        running,
        pool: new SequencePool(context, parallel, this.options.queueLimit, () => this.waitSeconds(entry)),
        bytes: estimateBytes(info) + (model.gpuLayers > 0 ? 0 : parallel * perSequence),
        lastUsed: Date.now(),
        generatedTokens: 0,
      };
      this.loaded.set(info.id, entry);
      log.info({ model: info.id, threads, contextSize: context.contextSize, sequences: parallel }, 'model loaded');
      if (this.closed) await this.unload(info.id);
      return entry;
    } catch (error) {
      await model.dispose();
      throw this.contextFailure(info, error);
    }
  }

  private threadTuner(info: ModelFile, cores: number): ThreadTuner | undefined {
    if (this.options.threads !== 'auto') return undefined;
    const key = stamp(info);
    const memory = this.options.threadMemory;
    return new ThreadTuner({
      candidates: threadCandidates(cores),
      cores,
      start: memory?.get(key),
      onChoice: (choice) => {
        this.options.log.info({ model: info.id, tokens: choice.tokens, threads: choice.threads, msPerToken: choice.msPerToken }, 'thread count chosen');
        if (choice.tokens === '1') memory?.set(key, choice.threads);
      },
    });
  }

  /** Sequences that fit in what the memory budget and the free memory (or free GPU memory) leave (see defaultParallel). */
  private async autoParallel(llama: Llama, model: LlamaModel, info: ModelFile, perSequence: number): Promise<number> {
    const gpu = model.gpuLayers > 0;
    const used = [...this.loaded.values()].reduce((sum, entry) => sum + entry.bytes, 0);
    const room = gpu ? (await llama.getVramState()).free : Math.min(this.options.memoryBudgetBytes - used - estimateBytes(info), freemem());
    return defaultParallel({ bytesPerSequence: perSequence, availableBytes: room, gpu, cores: llama.cpuMathCores });
  }

  /** Retry-After for a full queue: the expected time until a running request frees its sequence. */
  private waitSeconds(entry: Loaded): number {
    const running = [...entry.running].map((run) => ({ generated: run.sequence.tokenMeter.usedOutputTokens - run.outputBefore, limit: run.limit }));
    return secondsUntilFirstFree(running, entry.steps.stepMs, entry.typicalTokens);
  }

  /** Unloads idle models, least recently used first, until `needed` more bytes fit the memory budget. */
  private async makeRoom(id: string, needed: number): Promise<void> {
    const budget = this.options.memoryBudgetBytes;
    if (needed > budget) {
      throw new HearthError(
        'model_load_failed',
        `${id} needs about ${mb(needed)} MB but the memory budget is ${mb(budget)} MB. Raise models.memory_budget_mb in config.yaml or use a smaller model.`,
        { param: 'model' },
      );
    }
    const held = () => [
      ...[...this.loaded.values()].map((entry) => ({ id: entry.info.id, bytes: entry.bytes, busy: entry.pool.busy, lastUsed: entry.lastUsed })),
      ...[...this.residents.values()].map((resident) => ({ id: resident.id, bytes: resident.bytes, busy: resident.busy(), lastUsed: resident.lastUsed() })),
    ];
    const used = () => held().reduce((sum, entry) => sum + entry.bytes, this.reservedBytes);
    const idle = held()
      .filter((entry) => entry.busy === 0)
      .sort((a, b) => a.lastUsed - b.lastUsed);
    while (used() + needed > budget && idle.length > 0) await this.unload(idle.shift()!.id);
    if (used() + needed > budget) {
      throw new HearthError(
        'server_busy',
        `Loading ${id} needs about ${mb(needed)} MB; the models in use leave too little of the ${mb(budget)} MB budget. Retry when they finish.`,
        { retryAfter: 10 },
      );
    }
  }

  // ---- Room for work outside this engine (image models, images/memory.ts) ----
  private reservedBytes = 0;

  /**
   * Makes room in the memory budget for `bytes` used by something other than a language model
   * (an image pipeline) by unloading idle models like a model load would, and counts those bytes
   * against the budget until `release()`. Returns the models it unloaded, so they can be loaded
   * again afterwards.
   */
  async reserveMemory(label: string, bytes: number): Promise<{ unloaded: ModelFile[]; residents: string[]; release(): void }> {
    const before = [...this.loaded.values()].map((entry) => entry.info);
    const residents = [...this.residents.keys()];
    await this.makeRoom(label, bytes);
    this.reservedBytes += bytes;
    let released = false;
    return {
      unloaded: before.filter((info) => !this.loaded.has(info.id)),
      // Embedding models and the like: loaded again by their owner when next used.
      residents: residents.filter((id) => !this.residents.has(id)),
      release: () => {
        if (!released) this.reservedBytes -= bytes;
        released = true;
      },
    };
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
    await this.makeRoom(info.id, estimateBytes(info));
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
  private async openFile(info: ModelFile, onLoadProgress?: (fraction: number) => void): Promise<{ llama: Llama; model: LlamaModel }> {
    const llama = await loadLlama(this.options.gpu);
    try {
      return { llama, model: await llama.loadModel({ modelPath: info.path, onLoadProgress }) };
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

/** Memory one more sequence adds to the context, by node-llama-cpp's own estimate. */
function bytesPerSequence(model: LlamaModel, contextSize: number, batchSize: number): number {
  const estimate = (sequences: number) => {
    const requirement = model.fileInsights.estimateContextResourceRequirements({ contextSize, modelGpuLayers: model.gpuLayers, sequences, batchSize });
    return model.gpuLayers > 0 ? requirement.gpuVram : requirement.cpuRam;
  };
  return Math.max(0, estimate(2) - estimate(1));
}

/** Whether node-llama-cpp carries patches/node-llama-cpp+*.patch (per-step report and thread choice). */
function batchingPatched(context: LlamaContext): boolean {
  const options = (context as unknown as { _batchingOptions?: object })._batchingOptions;
  return options !== undefined && 'onBatchDecoded' in options;
}

function blend(previous: number | undefined, next: number): number {
  return previous === undefined ? next : previous * 0.8 + next * 0.2;
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
export function estimateBytes(info: Pick<ModelFile, 'sizeBytes'>): number {
  return Math.ceil(info.sizeBytes * 1.2) + 64 * 1024 * 1024;
}

function mb(bytes: number): number {
  return Math.round(bytes / (1024 * 1024));
}
