/**
 * The in-process engine: node-llama-cpp inside the companion. One context per model with `parallel`
 * sequences; concurrent requests are batched over them (see SequencePool), and the thread count is
 * chosen per batch size by measuring (see ThreadTuner). It runs wherever the llama-server engine
 * cannot, and embedding models.
 */
import type { Llama, LlamaContext, LlamaContextSequence, LlamaModel } from 'node-llama-cpp';
import { binding } from '../binding.js';
import { HearthError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { GeneratedTokens } from '../generated-tokens.js';
import { GrammarCache } from '../grammar-cache.js';
import { planGeneration, type ModelRuntime } from '../generation-plan.js';
import { threadCandidates } from '../llama.js';
import type { LoadedModel, LoadedStatus } from '../loaded-model.js';
import { commonStatus } from '../model-status.js';
import { planRaw } from '../raw-prompt.js';
import { bytesPerSequence, chooseParallel } from '../parallel.js';
import type { GenerationText, ModelRequest } from '../text-pipeline.js';
import { countPromptTokens } from '../token-count.js';
import { TokenRunCache } from '../token-runs.js';
import type { GenerationResult, ModelFile } from '../types.js';
import { secondsUntilFirstFree } from '../waiting-line.js';
import { BatchSteps, type StepListener } from './batch-steps.js';
import { generate } from './generate.js';
import { generateRaw } from './raw.js';
import { SequencePool } from './pool.js';
import { ThreadTuner } from './thread-tuner.js';

export interface InProcessSettings {
  threads: number | 'auto';
  contextSize: number;
  parallel: number | 'auto';
  queueLimit: number;
  log: Logger;
  threadMemory?: { get(key: string): number | undefined; set(key: string, threads: number): void };
}

export interface InProcessLoad {
  info: ModelFile;
  llama: Llama;
  model: LlamaModel;
  settings: InProcessSettings;
  /** Bytes of the memory budget the model's weights are estimated at. */
  weightBytes: number;
  /** What the budget and the other loaded models leave for this one (weights excluded). */
  roomBytes: number;
  /** A key for the thread memory that changes when the file does. */
  stamp: string;
  engineReason: string;
}

interface Running {
  sequence: LlamaContextSequence;
  outputBefore: number;
  limit: number;
}

export class InProcessModel implements LoadedModel {
  readonly engine = 'in-process' as const;
  lastUsed = Date.now();
  idleTimer?: NodeJS.Timeout;
  private readonly tokens = new GeneratedTokens();
  private readonly running = new Set<Running>();
  private readonly pool: SequencePool;

  private constructor(
    readonly info: ModelFile,
    readonly engineReason: string,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    private readonly runtime: ModelRuntime,
    private readonly steps: BatchSteps,
    private readonly threads: number,
    private readonly tuner: ThreadTuner | undefined,
    parallel: number,
    queueLimit: number,
    readonly bytes: number,
  ) {
    this.pool = new SequencePool(context, parallel, queueLimit, () => this.waitSeconds());
  }

  /** Creates the context on a loaded model; the caller disposes the model when this throws. */
  static async create(load: InProcessLoad): Promise<InProcessModel> {
    const { llama, model, settings, info } = load;
    const tuner = threadTuner(load, llama.cpuMathCores);
    const threads = tuner?.maxThreads ?? (settings.threads as number);
    const contextSize = Math.min(settings.contextSize, model.trainContextSize);
    const batchSize = Math.min(512, contextSize);
    const perSequence = bytesPerSequence(model, contextSize, batchSize);
    const gpu = model.gpuLayers > 0;
    const parallel = await chooseParallel(settings.parallel, { llama, gpu, bytesPerSequence: perSequence, budgetRoom: load.roomBytes });
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
      settings.log.warn(
        { model: info.id },
        'node-llama-cpp is not patched (run: node scripts/patch-dependencies.mjs): concurrent requests will decode in several passes',
      );
    const runtime: ModelRuntime = {
      llama,
      model,
      wrapper: binding().resolveChatWrapper(model),
      contextSize: context.contextSize,
      grammars: new GrammarCache(llama),
      tokenRuns: new TokenRunCache(model.tokenizer),
    };
    const bytes = load.weightBytes + (gpu ? 0 : parallel * perSequence);
    settings.log.info({ model: info.id, engine: 'in-process', threads, contextSize: context.contextSize, sequences: parallel }, 'model loaded');
    return new InProcessModel(info, load.engineReason, model, context, runtime, steps, threads, tuner, parallel, settings.queueLimit, bytes);
  }

  get busy(): number {
    return this.pool.busy;
  }

  async run(request: ModelRequest, text: GenerationText<'timed'>): Promise<GenerationResult> {
    // The prompt is rendered first: the pool gives the request the sequence that already holds its conversation.
    const plan = request.raw ? planRaw(this.model, this.runtime.contextSize, request) : await planGeneration(this.runtime, request);
    const sequence = await this.pool.acquire(request.signal, plan.promptTokens);
    const running: Running = { sequence, outputBefore: sequence.tokenMeter.usedOutputTokens, limit: request.maxTokens ?? this.runtime.contextSize };
    this.running.add(running);
    const counted = text.counted(this.tokens);
    try {
      const result =
        'raw' in plan
          ? await generateRaw(this.model, sequence, counted.request(request), plan)
          : await generate(this.runtime, sequence, counted.request(request), plan);
      counted.finish(result);
      return result;
    } finally {
      counted.end();
      this.running.delete(running);
      this.pool.release(sequence);
    }
  }

  countTokens(request: ModelRequest): Promise<number> {
    return countPromptTokens(this.runtime, request);
  }

  status(): LoadedStatus {
    return {
      ...commonStatus(this, { threads: this.threads, contextSize: this.runtime.contextSize, queue: this.pool, tokens: this.tokens }),
      threadChoices: this.tuner?.choices() ?? [],
      steps: this.steps.count,
      memoryBytes: this.model.size + this.context.stateSize,
    };
  }

  /** Calls `listener` after every decode step, with the ids of the sequences it advanced. Returns the unsubscribe. */
  observeSteps(listener: StepListener): () => void {
    return this.steps.observe(listener);
  }

  /** The context's sequence ids of the requests running now, in the order they started. */
  runningSequences(): number[] {
    return [...this.running].map((running) => this.pool.idOf(running.sequence)!);
  }

  rejectWaiting(error: unknown): void {
    this.pool.rejectWaiting(error);
  }

  async dispose(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
  }

  /** Retry-After for a full queue: the expected time until a running request frees its sequence. */
  private waitSeconds(): number {
    const running = [...this.running].map((run) => ({ generated: run.sequence.tokenMeter.usedOutputTokens - run.outputBefore, limit: run.limit }));
    return secondsUntilFirstFree(running, this.steps.stepMs, this.tokens.typical);
  }
}

function threadTuner(load: InProcessLoad, cores: number): ThreadTuner | undefined {
  const { settings, info } = load;
  if (settings.threads !== 'auto') return undefined;
  const memory = settings.threadMemory;
  return new ThreadTuner({
    candidates: threadCandidates(cores),
    cores,
    start: memory?.get(load.stamp),
    onChoice: (choice) => {
      settings.log.info({ model: info.id, tokens: choice.tokens, threads: choice.threads, msPerToken: choice.msPerToken }, 'thread count chosen');
      if (choice.tokens === '1') memory?.set(load.stamp, choice.threads);
    },
  });
}

/** Whether node-llama-cpp carries patches/node-llama-cpp+*.patch (per-step report and thread choice). */
function batchingPatched(context: LlamaContext): boolean {
  const options = (context as unknown as { _batchingOptions?: object })._batchingOptions;
  return options !== undefined && 'onBatchDecoded' in options;
}

/** An in-process model asked for something only the in-process engine has (decode steps, sequence ids). */
export function inProcessOnly(model: LoadedModel | undefined, id: string): InProcessModel {
  if (!model) throw new Error(`${id} is not loaded`);
  if (!(model instanceof InProcessModel))
    throw new HearthError('invalid_request_error', `${id} runs on the llama-server engine, which has no per-step report.`);
  return model;
}
