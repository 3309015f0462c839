/**
 * A chat model on the llama-server engine: its own supervised process, with flags from the model
 * and the memory budget (context, slots, threads, GPU layers, host-RAM prompt cache, one unified
 * KV cache), a queue in front of its slots, and the tokenizer and chat wrapper of a vocabulary-only
 * copy of the model in the companion. A crash fails the requests in flight and restarts the
 * process; repeated crashes end the model with the reason, and the engine unloads it. A process
 * that stops answering is ended and restarted too, but that is not counted as a crash: another
 * program can hold its connections, which says nothing about the model file.
 */
import { readFileSync } from 'node:fs';
import { freemem } from 'node:os';
import type { ChatWrapper, Llama, LlamaModel } from 'node-llama-cpp';
import { raceAbort } from '../../abort.js';
import { binding } from '../binding.js';
import { HearthError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { blend, GeneratedTokens } from '../generated-tokens.js';
import { GrammarCache } from '../grammar-cache.js';
import type { LoadedModel, LoadedStatus } from '../loaded-model.js';
import { commonStatus } from '../model-status.js';
import { planRaw } from '../raw-prompt.js';
import { bytesPerSequence, chooseParallel } from '../parallel.js';
import type { GenerationText, ModelRequest } from '../text-pipeline.js';
import { countPromptTokens } from '../token-count.js';
import { TokenRunCache } from '../token-runs.js';
import type { GenerationResult, ModelFile } from '../types.js';
import { secondsUntilFirstFree } from '../waiting-line.js';
import type { ServerBuildPaths } from './build.js';
import type { ServerClient } from './client.js';
import { generateOnServer, type PromptCounters, type ServerRuntime } from './generate.js';
import { generateRawOnServer } from './raw.js';
import type { HiddenSpan } from './output-filter.js';
import { draftArgs, type DraftChoice, type DraftModel } from './draft.js';
import type { GpuVariant } from './prebuilt.js';
import type { ServerBinary } from '#shared/api/admin.js';
import { ServerProcess, type ServerExit } from './process.js';
import { SlotQueue } from './slot-queue.js';
import { commonPrefix, MIN_SAVED_TOKENS, slotFolder, SlotStore } from './slot-store.js';
import { freeThreads, ownProcess, RETHREAD, ThreadFollower, type RethreadTiming, type ThreadWatch } from './threads.js';
import { callSyntax, plainText } from './tool-syntax.js';

const MiB = 2 ** 20;
/** Disk for a model's saved conversation slots unless models.slot_cache_mb says otherwise. */
export const DEFAULT_SLOT_CACHE_BYTES = 2 * 2 ** 30;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());
/** Crashes this close together end the model instead of restarting it once more. */
const CRASH_WINDOW_MS = 120_000;
const CRASHES_ALLOWED = 3;
/** A model idle this long saves its conversations' slots (a crash later loses nothing older). */
const IDLE_SAVE_MS = 10_000;

export interface ServerModelLoad {
  info: ModelFile;
  llama: Llama;
  /** The model loaded with its vocabulary only: tokenizer, chat template, GGUF facts. */
  vocab: LlamaModel;
  paths: ServerBuildPaths;
  /** The GPU library to run on, or false for the CPU. */
  gpu: GpuVariant;
  settings: {
    threads: number | 'auto';
    contextSize: number;
    parallel: number | 'auto';
    /** Layers on the GPU: 'auto' (llama-server's own fit) or a count; 0 keeps the model on the CPU. */
    gpuLayers?: number | 'auto';
    queueLimit: number;
    log: Logger;
    /** How often the process's /health is asked (default 15 s); two unanswered checks in a row end it as a crash. */
    healthCheckMs?: number;
    /** Disk for saved conversation slots (default 2 GiB); 0 saves none. */
    slotCacheBytes?: number;
    /** What other programs use of the CPU, for `threads: auto` (default: this machine's /proc). */
    threadWatch?: ThreadWatch;
    /** When an idle model on `threads: auto` looks at its thread count again (default RETHREAD). */
    rethread?: RethreadTiming;
  };
  /** The configured draft model for speculative decoding: used, or left off with the reason. */
  draft?: DraftChoice;
  /** The native build's binary when it is ready (it runs on the CPU only: a model on a GPU keeps the quick build). */
  native?: () => string | undefined;
  weightBytes: number;
  /** What the budget and the other loaded models leave for this one (weights excluded). */
  roomBytes: number;
  runDir: string;
  engineReason: string;
  onLoadProgress?: (fraction: number) => void;
  /** Ends the first start while it is in progress (the model was unloaded while loading). */
  signal?: AbortSignal;
  /** The model ended for good (it kept crashing): the engine unloads it. */
  onFailed: (reason: string) => void;
}

/** Why the server engine cannot drive a chat wrapper (its generation needs node-llama-cpp's own loop), or undefined. */
export function serverIncompatibility(wrapper: ChatWrapper): string | undefined {
  const syntax = callSyntax(wrapper);
  if ('unsupported' in syntax) return syntax.unsupported;
  const state = wrapper.generateContextState({
    chatHistory: [{ type: 'user', text: 'hi' }],
    availableFunctions: { probe: { description: 'probe', params: { type: 'object', properties: { a: { type: 'string' } } } } },
    documentFunctionParams: true,
  }) as { prefixTriggers?: unknown; noPrefixTrigger?: unknown; rerender?: unknown };
  if (state.prefixTriggers || state.noPrefixTrigger || state.rerender) {
    return `its chat format (${wrapper.wrapperName}) steers generation in stages that only node-llama-cpp's in-process loop performs`;
  }
  return undefined;
}

/** The memory a process holds (its resident set), from /proc. */
function residentBytes(pid: number): number | undefined {
  try {
    const kib = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib ? Number(kib) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

function hiddenSpans(wrapper: ChatWrapper): HiddenSpan[] {
  const segments = wrapper.settings.segments;
  const spans: HiddenSpan[] = [];
  for (const [segment, thought] of [
    [segments?.thought, true],
    [segments?.comment, false],
  ] as const) {
    if (!segment) continue;
    const close = plainText(segment.suffix) ?? '';
    if (typeof segment.prefix === 'object' && 'type' in segment.prefix && segment.prefix.type === 'openedOnStart')
      spans.push({ open: '', close, openAtStart: true, thought });
    else {
      const open = plainText(segment.prefix as never);
      if (open) spans.push({ open, close, thought });
    }
  }
  return spans;
}

interface Running {
  text: GenerationText<'counted'>;
  limit: number;
}

export class ServerModel implements LoadedModel {
  readonly engine = 'server' as const;
  lastUsed = Date.now();
  idleTimer?: NodeJS.Timeout;
  private process!: ServerProcess;
  private client!: ServerClient;
  private restarting?: Promise<void>;
  private failure?: string;
  private disposed = false;
  /** Aborted by dispose: a restart under way ends its process instead of waiting for the model to load again. */
  private readonly ending = new AbortController();
  private restarts = 0;
  private crashes: number[] = [];
  private readonly tokens = new GeneratedTokens();
  /** The process's flags but its threads (they follow the machine on `threads: auto`, and the draft's follow the binary). */
  private readonly args: string[];
  /** Looks again at the thread count while the model is idle (`threads: auto` only). */
  private readonly follower?: ThreadFollower;
  private rethreadTimer?: NodeJS.Timeout;
  private lastRequestEnd = Date.now();
  private disown?: () => void;
  /** The binary the process runs; a native one that would not start or crashed is not tried again for this model. */
  private binary: ServerBinary = 'prebuilt';
  private nativeRefused?: string;
  /** The native build is ready: the process moves to it once no request runs. */
  private switchWanted = false;
  private msPerToken?: number;
  private readonly prompt = { evaluated: 0, reused: 0 };
  private readonly drafted = { tokens: 0, accepted: 0 };
  private readonly running = new Set<Running>();
  private readonly queue: SlotQueue;
  /** The tokens each slot of the running process holds, as far as Hearth knows, and when it was last used. */
  private readonly slots = new Map<number, { tokens: number[]; used: number }>();
  /** Slots a request has been given (after a restore) and not yet sent its prompt to. */
  private readonly claimed = new Set<number>();
  readonly store: SlotStore;
  /** Saves run one after another (idle saves, a restore's, the last one at dispose). */
  private saving: Promise<void> = Promise.resolve();
  private idleSave?: NodeJS.Timeout;

  private constructor(
    private readonly load: ServerModelLoad,
    private readonly runtime: ServerRuntime,
    args: string[],
    private threads: number,
    readonly bytes: number,
    parallel: number,
    private readonly onGpu: boolean,
    private readonly draft: DraftModel | undefined,
  ) {
    this.queue = new SlotQueue(parallel, load.settings.queueLimit, () => this.waitSeconds());
    this.store = new SlotStore(
      slotFolder(load.runDir, load.info.id, load.info.path, load.info.sizeBytes),
      () => load.settings.slotCacheBytes ?? DEFAULT_SLOT_CACHE_BYTES,
      load.settings.log,
    );
    this.args = [...args, '--slot-save-path', this.store.folder];
    // A model on a GPU computes there: a restart for its few CPU threads would cost a reload of its weights.
    if (load.settings.threads === 'auto' && !onGpu) {
      const timing = load.settings.rethread ?? RETHREAD;
      this.follower = new ThreadFollower(load.llama.cpuMathCores, load.settings.threadWatch, Date.now, timing.apartMs);
      this.rethreadTimer = setInterval(() => this.rethreadIfIdle(timing.idleMs), timing.everyMs);
      this.rethreadTimer.unref();
    }
  }

  get info(): ModelFile {
    return this.load.info;
  }

  get engineReason(): string {
    return this.load.engineReason;
  }

  get busy(): number {
    return this.queue.busy;
  }

  static async start(load: ServerModelLoad): Promise<ServerModel> {
    const { vocab, llama, settings, info } = load;
    const wrapper = binding().resolveChatWrapper(vocab);
    const syntax = callSyntax(wrapper);
    if ('unsupported' in syntax) throw new Error(syntax.unsupported);
    // A vocabulary-only model has no context facts of its own: the GGUF header has them.
    const contextSize = Math.min(settings.contextSize, vocab.fileInsights.trainContextSize ?? settings.contextSize);
    const threads = settings.threads === 'auto' ? await freeThreads(llama.cpuMathCores, settings.threadWatch) : settings.threads;
    const gpu = load.gpu !== false && settings.gpuLayers !== 0;
    const perSequence = bytesPerSequence(vocab, contextSize, Math.min(512, contextSize), 0);
    // One sequence at this context must fit what the budget leaves; llama-server would otherwise swap or be killed while loading.
    if (!gpu && perSequence > load.roomBytes)
      throw new HearthError(
        'model_load_failed',
        `${info.id} at a context of ${contextSize} tokens needs about ${Math.ceil(perSequence / MiB)} MB per sequence; the memory budget leaves ${Math.max(0, Math.floor(load.roomBytes / MiB))} MB. Lower its context size or raise models.memory_budget_mb.`,
        { param: 'model' },
      );
    const parallel = await chooseParallel(settings.parallel, { llama, gpu, bytesPerSequence: perSequence, budgetRoom: load.roomBytes });
    if (parallel !== settings.parallel && settings.parallel !== 'auto')
      settings.log.warn({ model: info.id, asked: settings.parallel, sequences: parallel }, 'fewer sequences than asked: the memory left holds no more');
    const kvBytes = gpu ? 0 : parallel * perSequence;
    // Evicted conversations' prompts wait in host RAM (llama-server's --cache-ram, 8 GiB by default):
    // room for two full sets of slot states, at most a quarter of what the budget leaves, at least 64 MiB.
    const hostRoom = Math.min(load.roomBytes - kvBytes, freemem());
    const cacheMiB = Math.max(0, Math.min(8192, Math.floor((hostRoom * 0.25) / MiB), Math.max(64, Math.ceil((2 * parallel * perSequence) / MiB))));
    const args = [
      ['-m', info.path, '--alias', info.id],
      // One KV buffer for all slots keeps GPU graphs reusable as the set of busy slots changes; on a
      // CPU it made every step attend over all slots' cells (16 streams: 420 tok/s against 497 without).
      ['-c', String(contextSize * parallel), '-np', String(parallel), gpu ? '--kv-unified' : '--no-kv-unified'],
      ['--cache-ram', String(cacheMiB)],
      gpu ? (typeof settings.gpuLayers === 'number' ? ['-ngl', String(settings.gpuLayers)] : []) : ['-ngl', '0', '--fit', 'off'],
      projectorArgs(info, gpu),
    ].flat();
    const runtime: ServerRuntime = {
      llama,
      model: vocab,
      wrapper,
      contextSize,
      grammars: new GrammarCache(llama),
      tokenRuns: new TokenRunCache(vocab.tokenizer),
      syntax,
      hidden: hiddenSpans(wrapper),
    };
    // A draft's weights and its own KV cache (a share of the model's: its file against the model's) count against the budget too.
    const draft = load.draft && 'draft' in load.draft ? load.draft.draft : undefined;
    const draftBytes = draft ? draft.bytes + Math.ceil((kvBytes * draft.bytes) / Math.max(1, load.weightBytes)) : 0;
    const model = new ServerModel(load, runtime, args, threads, load.weightBytes + kvBytes + cacheMiB * MiB + draftBytes, parallel, gpu, draft);
    await model.launch(load.onLoadProgress, load.signal);
    settings.log.info(
      { model: info.id, engine: 'server', build: model.binary, pid: model.process.pid, threads, contextSize, sequences: parallel, cacheMiB },
      'model loaded',
    );
    return model;
  }

  private async launch(onLoadProgress?: (fraction: number) => void, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const native = this.onGpu || this.nativeRefused ? undefined : this.load.native?.();
    let process: ServerProcess;
    try {
      process = await ServerProcess.start({
        paths: native ? { ...this.load.paths, binary: native } : this.load.paths,
        gpu: this.load.gpu,
        args: [
          ...this.args,
          ...['-t', String(this.threads), '-tb', String(this.threads)],
          // The native build has one OpenMP pool for the model and its draft; the quick build does not.
          ...(this.draft ? draftArgs(this.draft, this.threads, this.onGpu, native !== undefined) : []),
        ],
        runDir: this.load.runDir,
        log: this.load.settings.log,
        onLoadProgress,
        signal,
      });
    } catch (error) {
      if (!native || signal?.aborted) throw error;
      // The native binary would not start here: the quick build runs the model, and the native one is not tried again.
      this.refuseNative(error instanceof Error ? error.message : String(error));
      return this.launch(onLoadProgress, signal);
    }
    this.binary = native ? 'native' : 'prebuilt';
    this.process = process;
    this.disown?.();
    this.disown = ownProcess(process.pid);
    this.client = process.client;
    this.slots.clear();
    this.claimed.clear();
    // Each process draws its own media marker; a request's images go where it stands in the prompt.
    if (this.info.projector) this.runtime.mediaMarker = (await process.client.json<{ media_marker?: string }>('GET', '/props')).media_marker;
    void process.exited.then((exit) => {
      clearInterval(watchdog);
      if (this.disposed || this.process !== process || exit.stopped) return;
      this.onExit(exit);
    });
    // A process that stops answering (hung, stopped, or its connections held) is ended and restarted, not counted as a crash.
    let unanswered = 0;
    let asking = false;
    const every = this.load.settings.healthCheckMs ?? 15_000;
    const watchdog = setInterval(() => {
      if (asking || !process.running) return;
      asking = true;
      this.client
        .json('GET', '/health', undefined, AbortSignal.timeout(Math.max(every, 2000)))
        .then(
          () => (unanswered = 0),
          () => {
            if (++unanswered < 2 || this.disposed || this.process !== process) return;
            this.load.settings.log.error({ model: this.info.id, pid: process.pid }, 'llama-server stopped answering; ending it');
            process.endUnresponsive();
          },
        )
        .finally(() => (asking = false));
    }, every);
    watchdog.unref();
  }

  private onExit(exit: ServerExit): void {
    const { reason } = exit;
    // A native binary that crashes is not trusted again: the restart runs the quick build.
    if (this.binary === 'native' && !exit.unresponsive) this.refuseNative(reason);
    // Ended by the watchdog: restarted, never counted against the model.
    if (!exit.unresponsive) {
      const now = Date.now();
      this.crashes = [...this.crashes.filter((at) => now - at < CRASH_WINDOW_MS), now];
      this.load.settings.log.error({ model: this.info.id, reason }, 'the llama-server process of this model ended unexpectedly');
      if (this.crashes.length >= CRASHES_ALLOWED)
        return this.fail(
          `${this.info.id} keeps crashing its llama-server process (${reason}). It is tried again after a pause, or at once when loaded by the owner.`,
        );
    }
    this.restarts++;
    this.restarting = this.launch(undefined, this.ending.signal)
      .catch((error: unknown) => this.restartFailed(error))
      .finally(() => (this.restarting = undefined));
  }

  /** A restart that did not end with a running process: the model fails, unless it was disposed meanwhile (that ended the restart). */
  private restartFailed(error: unknown): void {
    if (this.disposed) return;
    this.fail(`${this.info.id} could not be restarted: ${error instanceof Error ? error.message : String(error)}`);
  }

  private refuseNative(reason: string): void {
    this.nativeRefused = reason;
    this.load.settings.log.warn({ model: this.info.id, reason }, 'the native llama-server build did not run this model; it runs on the quick build');
  }

  /**
   * The native build is ready: once no request runs, the process is restarted on it as a reload
   * restarts it (its conversations saved first, restored at their next turn). A request that
   * arrives meanwhile waits for the restart.
   */
  useNativeWhenIdle(): void {
    this.switchWanted = true;
    this.switchIfIdle();
  }

  private switchIfIdle(): void {
    if (!this.switchWanted || this.disposed || this.failure || this.restarting || this.queue.busy > 0) return;
    this.switchWanted = false;
    if (this.onGpu || this.nativeRefused || this.binary === 'native' || !this.load.native?.()) return;
    this.restartIdle('the model moved to the native llama-server build');
  }

  /**
   * `threads: auto`, idle for `idleMs`: when the machine has changed for a while (ThreadFollower),
   * the process restarts with the cores now free, as the native switch restarts it.
   */
  private rethreadIfIdle(idleMs: number): void {
    if (this.disposed || this.failure || this.restarting || this.queue.busy > 0 || Date.now() - this.lastRequestEnd < idleMs) return;
    const next = this.follower?.look(this.threads);
    if (next === undefined) return;
    const before = this.threads;
    this.threads = next;
    this.restartIdle(
      `the model restarted with ${next} thread${next === 1 ? '' : 's'} instead of ${before}: other programs use the machine ${next < before ? 'more' : 'less'} than when it started`,
    );
  }

  /** Restarts the idle process (its conversations saved first, restored at their next turn); a request that arrives meanwhile waits for it. */
  private restartIdle(why: string): void {
    const old = this.process;
    this.restarting = (async () => {
      await this.saveSlots().catch(() => undefined);
      await old.stop();
      await this.launch(undefined, this.ending.signal);
      this.load.settings.log.info({ model: this.info.id, pid: this.process.pid, build: this.binary, threads: this.threads }, why);
    })()
      .catch((error: unknown) => this.restartFailed(error))
      .finally(() => (this.restarting = undefined));
  }

  private fail(reason: string): void {
    this.failure = reason;
    this.queue.rejectWaiting(new HearthError('model_load_failed', reason, { param: 'model' }));
    this.load.onFailed(reason);
  }

  async run(request: ModelRequest, text: GenerationText<'timed'>): Promise<GenerationResult> {
    // A raw prompt is rendered (and refused when it cannot run) before it waits for a slot.
    const raw = request.raw && planRaw(this.runtime.model, this.runtime.contextSize, request);
    await this.queue.acquire(request.signal);
    const running: Running = { text: text.counted(this.tokens), limit: request.maxTokens ?? this.runtime.contextSize };
    this.running.add(running);
    const started = performance.now();
    let pinned: number | undefined;
    try {
      // A restart can take as long as a load: a request cancelled meanwhile (its client left, the server stops) stops waiting.
      await raceAbort(this.restarting ?? Promise.resolve(), request.signal);
      if (this.failure) throw new HearthError('model_load_failed', this.failure, { param: 'model' });
      const counters = (counts: PromptCounters) => {
        this.prompt.evaluated += counts.evaluated;
        this.prompt.reused += counts.reused;
        this.drafted.tokens += counts.drafted ?? 0;
        this.drafted.accepted += counts.accepted ?? 0;
        if (counts.slot !== undefined) {
          this.claimed.delete(counts.slot);
          if (counts.held) this.slots.set(counts.slot, { tokens: counts.held, used: Date.now() });
          else this.slots.delete(counts.slot);
        }
      };
      const result = raw
        ? await generateRawOnServer(this.client, running.text.request(request), raw, counters)
        : await generateOnServer(
            this.runtime,
            this.client,
            running.text.request(request),
            counters,
            async (prompt) => (pinned = await this.restoreFor(prompt)),
          );
      running.text.finish(result);
      if (result.finishReason !== 'cancelled' && result.completionTokens > 0) {
        this.msPerToken = blend(this.msPerToken, (performance.now() - started) / result.completionTokens);
      }
      return result;
    } catch (error) {
      // The process is ending: wait for its exit (a moment) so its restart is under way before the next request.
      if (error instanceof HearthError && error.code === 'engine_crashed') await Promise.race([this.process.exited, sleep(2000)]);
      throw error;
    } finally {
      running.text.end();
      if (pinned !== undefined) this.claimed.delete(pinned);
      this.running.delete(running);
      this.queue.release();
      this.lastRequestEnd = Date.now();
      this.saveWhenIdle();
      this.switchIfIdle();
    }
  }

  countTokens(request: ModelRequest): Promise<number> {
    return countPromptTokens(this.runtime, request);
  }

  status(): LoadedStatus {
    return {
      ...commonStatus(this, { threads: this.threads, contextSize: this.runtime.contextSize, queue: this.queue, tokens: this.tokens }),
      threadChoices: [],
      steps: 0,
      memoryBytes: residentBytes(this.process.pid) ?? this.bytes,
      process: { pid: this.process.pid, restarts: this.restarts },
      build: this.binary,
      promptTokens: { ...this.prompt },
      ...this.draftStatus(),
      ...(this.info.projector ? { projector: this.info.projector.path } : {}),
    };
  }

  private draftStatus(): Pick<LoadedStatus, 'draft'> {
    const choice = this.load.draft;
    if (!choice) return {};
    if ('off' in choice) return { draft: { off: choice.off } };
    return { draft: { model: choice.draft.id, tokens: this.drafted.tokens, accepted: this.drafted.accepted } };
  }

  /** The process's /metrics counters (tests and benchmarks read the server's own figures). */
  metrics(): Promise<Record<string, number>> {
    return this.client.metrics();
  }

  /** The running process (tests end it to check crash handling). */
  get serverProcess(): ServerProcess {
    return this.process;
  }

  rejectWaiting(error: unknown): void {
    this.queue.rejectWaiting(error);
  }

  /**
   * Restores the saved conversation that shares the longest prefix with a prompt into an idle
   * slot, when no slot of the running process holds a longer one; returns that slot for the
   * request, or undefined (the server picks as usual).
   */
  private async restoreFor(prompt: number[]): Promise<number | undefined> {
    const found = this.store.match(prompt);
    if (!found) return undefined;
    const live = Math.max(0, ...[...this.slots.values()].map((held) => commonPrefix(held.tokens, prompt)));
    // Worth a read from disk only when it spares more than a few tokens over what a slot holds.
    if (found.shared < live + MIN_SAVED_TOKENS) return undefined;
    try {
      const states = await this.client.json<{ id: number; is_processing: boolean }[]>('GET', '/slots');
      const idle = states.filter((state) => !state.is_processing && !this.claimed.has(state.id));
      if (idle.length === 0) return undefined;
      // An empty slot first, else the one used least recently (its conversation saved first, so it is not lost).
      const [slot] = idle.map((state) => state.id).sort((a, b) => (this.slots.get(a)?.used ?? 0) - (this.slots.get(b)?.used ?? 0));
      this.claimed.add(slot!);
      const held = this.slots.get(slot!);
      if (held) await (this.saving = this.saving.then(() => this.store.save(this.client, slot!, held.tokens, held.used)));
      if (!(await this.store.restore(this.client, slot!, found.entry))) {
        this.claimed.delete(slot!);
        return undefined;
      }
      this.slots.set(slot!, { tokens: found.entry.tokens, used: Date.now() });
      return slot;
    } catch (error) {
      this.load.settings.log.warn({ model: this.info.id, error: error instanceof Error ? error.message : String(error) }, 'no saved conversation restored');
      return undefined;
    }
  }

  /** Saves the conversations the process's slots hold (idle, and before it stops: unload, reload, Hearth stopping). */
  saveSlots(): Promise<void> {
    const save = async () => {
      if (!this.process.running) return;
      for (const [slot, held] of [...this.slots]) {
        if (held.tokens.length >= MIN_SAVED_TOKENS) await this.store.save(this.client, slot, held.tokens, held.used);
      }
    };
    this.saving = this.saving.then(save, save);
    return this.saving;
  }

  /** Once no request has run for a while, the slots are saved (the store skips states saved already). */
  private saveWhenIdle(): void {
    clearTimeout(this.idleSave);
    this.idleSave = setTimeout(() => {
      if (this.disposed || this.queue.busy > 0 || this.restarting) return;
      void this.saveSlots().catch(() => undefined);
    }, IDLE_SAVE_MS);
    this.idleSave.unref();
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    clearTimeout(this.idleSave);
    clearInterval(this.rethreadTimer);
    this.ending.abort(new HearthError('server_busy', `${this.info.id} was unloaded while its llama-server process restarted.`, { retryAfter: 1 }));
    await this.restarting;
    await this.saveSlots().catch(() => undefined);
    await this.process.stop();
    this.disown?.();
    await this.load.vocab.dispose();
  }

  private waitSeconds(): number {
    const running = [...this.running].map(({ text, limit }) => ({ generated: text.generated, limit }));
    return secondsUntilFirstFree(running, this.msPerToken, this.tokens.typical);
  }
}

/** llama-server's flags for the model's projector: its file, kept on the CPU with the model when the model is (llama-server would offload it to a GPU). */
function projectorArgs(info: ModelFile, gpu: boolean): string[] {
  if (!info.projector) return [];
  return ['--mmproj', info.projector.path, ...(gpu ? [] : ['--no-mmproj-offload'])];
}
