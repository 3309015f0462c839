import type { Llama, LlamaModel } from 'node-llama-cpp';
import { raceAbort } from '../abort.js';
import { binding } from './binding.js';
import type { EngineBuildStatus, EngineSetting, NativeBuildStatus } from '#shared/api/admin.js';
import { HearthError } from '../errors.js';
import type { Logger } from '../logger.js';
import { diagnoseLoadFailure } from './diagnose.js';
import { chooseEngine, fallbackReason } from './engine-choice.js';
import { mediaRefusal, requestMedia } from './media.js';
import type { StepListener } from './in-process/batch-steps.js';
import { InProcessModel, inProcessOnly } from './in-process/model.js';
import { loadOptionsFor, type ModelOverrides } from './load-options.js';
import { loadLlama, type GpuSetting } from './llama.js';
import type { LoadedModel, LoadedStatus } from './loaded-model.js';
import { fileStamp as stamp, MemoryBudget } from './memory-budget.js';
import { GrammarCache } from './grammar-cache.js';
import type { ServerBuild } from './server/build-service.js';
import type { RethreadTiming, ThreadWatch } from './server/threads.js';
import type { NativeBinary } from './server/native-service.js';
import type { DraftChoice } from './server/draft.js';
import { DEFAULT_SLOT_CACHE_BYTES, ServerModel, serverIncompatibility } from './server/model.js';
import { clearSlotFolders, slotUsage, type SlotUsage } from './server/slot-store.js';
import { GenerationText, type GenerationObserver } from './text-pipeline.js';
import { countPromptTokens } from './token-count.js';
import type { GenerationRequest, GenerationResult, ModelFile } from './types.js';

export type { LoadedStatus } from './loaded-model.js';
export { estimateBytes, type Resident } from './memory-budget.js';

export interface EngineOptions {
  gpu: GpuSetting;
  /** A fixed thread count, or 'auto' (in process: chosen per batch size by measuring, see ThreadTuner; llama-server: the cores). */
  threads: number | 'auto';
  contextSize: number;
  /** Sequences per context: concurrent requests to one model are batched across them. 'auto' follows model size and memory. */
  parallel: number | 'auto';
  queueLimit: number;
  idleUnloadSeconds: number;
  memoryBudgetBytes: number;
  /** Load options of single models (context size, threads, parallel, GPU layers) in place of the ones above. */
  overrides?: ModelOverrides;
  /** Which engine runs chat models (default here: in-process; the companion's config defaults to auto). */
  engine?: EngineSetting;
  /** The llama-server build (needed for auto and server). */
  build?: ServerBuild;
  /** The native llama-server build: models on the CPU move to it once it is ready. */
  native?: NativeBinary;
  /** Where the server engine's processes leave pid files (the data folder's engine/). */
  runDir?: string;
  /** How often a llama-server process's health is checked (default 15 s). */
  healthCheckMs?: number;
  /** Disk for each server-engine model's saved conversation slots (default 2 GiB; 0 saves none). */
  slotCacheBytes?: number;
  /** What other programs use of the CPU, for llama-server threads on auto (default: this machine's /proc; tests give a stand-in). */
  threadWatch?: ThreadWatch;
  /** When an idle llama-server model on auto threads looks at its count again (default: every 30 s after 30 s idle, restarts 5 min apart). */
  rethread?: RethreadTiming;
  /** Resolves a model's draft (a local model id) and checks its vocabulary against the model's file; without it, drafts are left off. */
  chooseDraft?: (modelPath: string, draftId: string) => Promise<DraftChoice>;
  /** Remembers the thread count chosen for one-token decodes across restarts: the next trial starts there. */
  threadMemory?: { get(key: string): number | undefined; set(key: string, threads: number): void };
  log: Logger;
  /** Load progress for the app's status stream (see `LoadEvent`). */
  onLoad?: (event: LoadEvent) => void;
  /** Hears each generation's first-token time and token counts (GET /metrics). */
  observer?: GenerationObserver;
}

/** A model's load: weights read (fraction 0..1), then ready or failed. */
export type LoadEvent = { id: string; state: 'loading'; fraction: number } | { id: string; state: 'ready' } | { id: string; state: 'failed'; message: string };

/**
 * Loads models on first use on the engine chosen for them (llama-server or in-process), runs
 * requests on them, unloads on idle or memory pressure. The one interface over both engines.
 */
export class Engine extends MemoryBudget {
  private readonly loading = new Map<string, { done: Promise<LoadedModel>; abort: AbortController }>();
  /** Generations in progress: closing waits for them, so a model is never disposed under one. */
  private readonly generations = new Set<Promise<GenerationResult>>();
  /** Models llama-server could not run though its build works, while their file is unchanged. */
  private readonly serverRefusals = new Map<string, { stamp: string; reason: string }>();

  constructor(private options: EngineOptions) {
    super(options.log, () => options.memoryBudgetBytes);
    options.native?.onReady(() => this.useNativeBuild());
  }

  /** New settings apply to models loaded from now on; loaded ones keep theirs until unloaded. */
  configure(next: Omit<EngineOptions, 'log' | 'threadMemory' | 'build' | 'native' | 'runDir' | 'observer'>): void {
    this.options = { ...this.options, ...next };
  }

  /** The budget `makeRoom` loads against. */
  get memoryBudgetBytes(): number {
    return this.options.memoryBudgetBytes;
  }

  /** The engine setting in force and the state of the llama-server build and its native build. */
  async engineStatus(): Promise<{ setting: EngineSetting; build: EngineBuildStatus; native?: NativeBuildStatus }> {
    await this.options.build?.checkTools();
    const native = this.options.native?.status();
    return { setting: this.options.engine ?? 'in-process', build: this.buildStatus(), ...(native ? { native } : {}) };
  }

  /** Forgets a failed native build and starts it again in the background; undefined without a native build. */
  retryNativeBuild(): NativeBuildStatus | undefined {
    return this.options.native?.retry();
  }

  /** The native build is ready: each model on llama-server moves to it once it is idle (see ServerModel.useNativeWhenIdle). */
  private useNativeBuild(): void {
    for (const model of this.loaded.values()) if (model instanceof ServerModel) model.useNativeWhenIdle();
  }

  /** Tokens one request to this model may use: its loaded context, else the context it would be loaded with. */
  contextWindow(id: string, trained: number | null): number {
    const loaded = this.loaded.get(id);
    if (loaded) return loaded.status().contextSize;
    const { contextSize } = loadOptionsFor(this.options, id);
    return trained ? Math.min(contextSize, trained) : contextSize;
  }

  /** The conversations llama-server models saved to disk (every model's, loaded or not), and the disk each model may use for them. */
  savedConversations(): SlotUsage & { budgetBytes: number } {
    const usage = this.options.runDir ? slotUsage(this.options.runDir) : { files: 0, bytes: 0, models: [] };
    return { ...usage, budgetBytes: this.options.slotCacheBytes ?? DEFAULT_SLOT_CACHE_BYTES };
  }

  /** Deletes every saved conversation (the same as `hearth engine cache clear`); loaded models keep saving from now on. Returns the bytes freed. */
  clearSavedConversations(): number {
    const stores = [...this.loaded.values()].flatMap((model) => (model instanceof ServerModel ? [model.store] : []));
    if (this.options.runDir) return clearSlotFolders(this.options.runDir, stores);
    for (const store of stores) store.clear();
    return 0;
  }

  status(): LoadedStatus[] {
    return [...this.loaded.values()].map((entry) => entry.status()).concat(this.residentStatus());
  }

  /** Runs a request on its model, loaded on first use; its text and thought reach `onText` / `onReasoning` through the pipeline (text-pipeline.ts). */
  async run(info: ModelFile, request: GenerationRequest): Promise<GenerationResult> {
    const { onText, onReasoning, ...rest } = request;
    const observer = this.options.observer;
    const text = GenerationText.open(onText, observer && ((seconds) => observer.firstToken(info.id, seconds)), onReasoning);
    if (!info.capabilities.includes('chat')) throw new HearthError('model_not_chat', `${info.id} is an embedding model and cannot chat.`, { param: 'model' });
    const media = requestMedia(request);
    const unfit = mediaRefusal(info, media);
    if (unfit) throw unfit;
    // The load goes on for others; this request stops waiting for it when it is cancelled (its client left, the server stops).
    const entry = await raceAbort(this.load(info), request.signal);
    const refused = mediaRefusal(info, media, { kind: entry.engine, reason: entry.engineReason });
    if (refused) throw refused;
    this.touch(entry);
    const generation = entry.run(rest, text);
    this.generations.add(generation);
    let result: GenerationResult;
    try {
      result = await generation;
    } finally {
      this.generations.delete(generation);
      this.touch(entry);
    }
    observer?.generated(info.id, result.promptTokens, result.completionTokens);
    return result;
  }

  /**
   * The request's prompt tokens as `run` would render them (chat template and tools, or raw). A
   * loaded model counts with its own tokenizer; otherwise the file is opened for its vocabulary
   * only (no weights, no context) and closed again, which does not load the model.
   */
  async countTokens(info: ModelFile, request: GenerationRequest): Promise<number> {
    if (!info.capabilities.includes('chat')) throw new HearthError('model_not_chat', `${info.id} is an embedding model and cannot chat.`, { param: 'model' });
    const { onText: _onText, ...rest } = request;
    const loaded = this.loaded.get(info.id);
    if (loaded) return loaded.countTokens(rest);
    const { llama, model } = await this.openFile(info, { vocabOnly: true, signal: request.signal });
    try {
      return await countPromptTokens(
        { llama, model, wrapper: binding().resolveChatWrapper(model), contextSize: Infinity, grammars: new GrammarCache(llama) },
        rest,
      );
    } finally {
      await model.dispose();
    }
  }

  /** Calls `listener` after every decode step of a model loaded in process, with the ids of the sequences it advanced. */
  observeSteps(id: string, listener: StepListener): () => void {
    return inProcessOnly(this.loaded.get(id), id).observeSteps(listener);
  }

  /** The context's sequence ids of the requests running on a model loaded in process, in the order they started. */
  runningSequences(id: string): number[] {
    const entry = this.loaded.get(id);
    return entry ? inProcessOnly(entry, id).runningSequences() : [];
  }

  /** The loaded model itself (tests and benchmarks look at its engine's own figures). */
  loadedModel(id: string): LoadedModel | undefined {
    return this.loaded.get(id);
  }

  /** Loads a model, or answers the load under way; `retry` (the owner's own Load) tries a model that failed again at once. */
  load(info: ModelFile, options: { retry?: boolean } = {}): Promise<LoadedModel> {
    if (this.closed) return Promise.reject(new HearthError('server_busy', 'The server is shutting down.', { retryAfter: 5 }));
    const ready = this.loaded.get(info.id);
    if (ready) return Promise.resolve(ready);
    if (options.retry) this.failures.forget(info.id);
    const known = this.loadError(info);
    if (known) return Promise.reject(new HearthError('model_load_failed', known, { param: 'model' }));
    let pending = this.loading.get(info.id);
    if (!pending) {
      const abort = new AbortController();
      const done = this.reportLoad(info.id, this.loadNow(info, abort.signal)).finally(() => this.loading.delete(info.id));
      pending = { done, abort };
      this.loading.set(info.id, pending);
    }
    return pending.done;
  }

  /** Unloads a model; one still loading has its load ended (its engine process with it). */
  override async unload(id: string): Promise<boolean> {
    const pending = this.loading.get(id);
    if (!pending) return super.unload(id);
    pending.abort.abort(new HearthError('server_busy', `${id} was unloaded while it loaded. Retry to load it again.`, { retryAfter: 1 }));
    await pending.done.catch(() => undefined);
    await super.unload(id);
    return true;
  }

  private reportLoad(id: string, loading: Promise<LoadedModel>): Promise<LoadedModel> {
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

  async close(): Promise<void> {
    this.closed = true;
    // A load in progress is ended, not waited for: a large model can take minutes to load.
    for (const pending of this.loading.values()) pending.abort.abort(new HearthError('server_busy', 'The server is shutting down.', { retryAfter: 5 }));
    await Promise.allSettled([...this.loading.values()].map((pending) => pending.done));
    await Promise.allSettled([...this.generations]);
    for (const id of [...this.loaded.keys(), ...this.residents.keys()]) await this.unload(id);
  }

  private async loadNow(info: ModelFile, signal: AbortSignal): Promise<LoadedModel> {
    await this.makeRoom(info.id, this.weightBytes(info));
    await this.options.build?.checkTools();
    signal.throwIfAborted();
    let choice = chooseEngine(this.options.engine ?? 'in-process', this.buildStatus(), info.id);
    if ('refused' in choice) throw choice.refused;
    const refusal = this.serverRefusals.get(info.id);
    if (choice.engine === 'server' && refusal?.stamp === stamp(info) && this.options.engine !== 'server')
      choice = { engine: 'in-process', reason: refusal.reason };
    let entry: LoadedModel | undefined;
    if (choice.engine === 'server') {
      const started = await this.startOnServer(info, choice.reason, signal);
      if ('problem' in started) choice = { engine: 'in-process', reason: fallbackReason(started.problem) };
      else entry = started.model;
    }
    entry ??= await this.startInProcess(info, choice.reason, signal);
    if (signal.aborted) {
      await entry.dispose();
      throw signal.reason;
    }
    this.loaded.set(info.id, entry);
    this.failures.loaded(info.id);
    if (this.closed) await this.unload(info.id);
    return entry;
  }

  private async startInProcess(info: ModelFile, reason: string, signal: AbortSignal): Promise<LoadedModel> {
    const onLoad = this.options.onLoad;
    const own = loadOptionsFor(this.options, info.id);
    const { llama, model } = await this.openFile(info, {
      onLoadProgress: onLoad && ((fraction) => onLoad({ id: info.id, state: 'loading', fraction })),
      gpuLayers: own.gpuLayers,
      signal,
    });
    try {
      return await InProcessModel.create({
        info,
        llama,
        model,
        settings: { ...this.options, ...own },
        weightBytes: this.weightBytes(info),
        roomBytes: this.roomFor(info),
        stamp: stamp(info),
        engineReason: reason,
      });
    } catch (error) {
      await model.dispose();
      if (signal.aborted) throw signal.reason;
      throw this.contextFailure(info, error);
    }
  }

  /** The model on its own llama-server process, or the problem that keeps it off the server engine. */
  private async startOnServer(info: ModelFile, reason: string, signal: AbortSignal): Promise<{ model: LoadedModel } | { problem: string }> {
    const paths = this.options.build?.ready();
    if (!paths) return { problem: 'its build is not ready' };
    const { llama, model: vocab } = await this.openFile(info, { vocabOnly: true, signal });
    const incompatible = serverIncompatibility(binding().resolveChatWrapper(vocab));
    const onLoad = this.options.onLoad;
    const own = loadOptionsFor(this.options, info.id);
    try {
      if (incompatible) throw new Error(incompatible);
      const choose = this.options.chooseDraft ?? (() => Promise.resolve({ off: 'drafts are not available here' }));
      const draft = own.draft ? await choose(info.path, own.draft) : undefined;
      if (draft && 'off' in draft) this.options.log.warn({ model: info.id, draft: own.draft, reason: draft.off }, 'the model loads without its draft');
      return {
        model: await ServerModel.start({
          info,
          llama,
          vocab,
          paths,
          gpu: this.options.gpu === 'cpu' ? false : llama.gpu,
          settings: { ...this.options, ...own },
          ...(draft ? { draft } : {}),
          native: () => this.options.native?.binary(),
          weightBytes: this.weightBytes(info),
          roomBytes: this.roomFor(info),
          runDir: this.options.runDir ?? paths.root,
          engineReason: reason,
          onLoadProgress: onLoad && ((fraction) => onLoad({ id: info.id, state: 'loading', fraction })),
          signal,
          onFailed: (why) => {
            // It may pass (the crashes may have had another cause): tried again after a back-off, or on the owner's Load.
            this.failures.remember(info, why, { passing: true });
            void this.unload(info.id);
          },
        }),
      };
    } catch (error) {
      await vocab.dispose();
      if (signal.aborted) throw signal.reason;
      const problem = error instanceof Error ? error.message : String(error);
      this.options.log.warn({ model: info.id, problem }, 'llama-server could not run this model');
      if (this.options.engine === 'server')
        throw new HearthError('model_load_failed', `${info.id} cannot run on the llama-server engine: ${problem}`, { param: 'model' });
      this.serverRefusals.set(info.id, { stamp: stamp(info), reason: fallbackReason(problem) });
      return { problem };
    }
  }

  private buildStatus(): EngineBuildStatus {
    const build = this.options.build;
    if (!build) return { state: 'absent', reason: 'no llama-server build is configured' };
    return this.options.engine === 'in-process' ? build.status() : build.startInBackground();
  }

  /** Memory room for a model's contexts: the budget less the models loaded and the model's own weights. */
  private roomFor(info: ModelFile): number {
    return this.options.memoryBudgetBytes - this.usedBytes() - this.weightBytes(info);
  }

  /** llama.loadModel with the reason of a failure diagnosed and remembered while the file is unchanged. */
  protected async openFile(
    info: ModelFile,
    options: { onLoadProgress?: (fraction: number) => void; vocabOnly?: boolean; gpuLayers?: number | 'auto'; signal?: AbortSignal } = {},
  ): Promise<{ llama: Llama; model: LlamaModel }> {
    const llama = await loadLlama(this.options.gpu);
    try {
      const { onLoadProgress, vocabOnly, gpuLayers, signal } = options;
      return { llama, model: await llama.loadModel({ modelPath: info.path, onLoadProgress, vocabOnly, gpuLayers, loadSignal: signal }) };
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      const reason = (await diagnoseLoadFailure(info.path)) ?? (error instanceof Error ? error.message : String(error));
      const message = `${info.id} could not be loaded from ${info.path}: ${reason}`;
      this.failures.remember(info, message);
      this.options.log.error({ model: info.id, err: error }, 'model load failed');
      throw new HearthError('model_load_failed', message, { param: 'model' });
    }
  }

  protected touch(entry: LoadedModel): void {
    entry.lastUsed = Date.now();
    clearTimeout(entry.idleTimer);
    if (this.options.idleUnloadSeconds <= 0) return;
    entry.idleTimer = setTimeout(() => {
      if (entry.busy === 0 && this.loaded.get(entry.info.id) === entry) void this.unload(entry.info.id);
      else this.touch(entry);
    }, this.options.idleUnloadSeconds * 1000);
    entry.idleTimer.unref();
  }
}
