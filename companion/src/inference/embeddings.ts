import type { Llama, LlamaEmbeddingContext, LlamaModel } from 'node-llama-cpp';
import { HearthError } from '../errors.js';
import type { Logger } from '../logger.js';
import { estimateBytes, type Engine, type LoadedStatus, type Resident } from './engine.js';
import { threadCandidates } from './llama.js';
import { loadOptionsFor, type ModelOverrides } from './load-options.js';
import type { ModelFile } from './types.js';

export interface EmbeddingSettings {
  /** A fixed thread count per context, or 'auto' to measure per model. */
  threads: number | 'auto';
  /** Tokens per input at most (capped at the model's training context). */
  contextSize: number;
  /** Embedding contexts per model at most (and at most the cores over the threads per context): the inputs of an array run across them at once. 'auto': the cores decide. */
  parallel: number | 'auto';
  queueLimit: number;
  idleUnloadSeconds: number;
  /** Context size, threads and parallel of single models in place of the ones above. */
  overrides?: ModelOverrides;
}

export interface EmbedOptions {
  /** Cut an input longer than the context to its opening (memory) instead of refusing it with a 400 (the API). */
  truncate?: boolean;
  signal?: AbortSignal;
  /** The request field holding the inputs, for error messages (default `input`). */
  param?: string;
  /** A vector size asked for: only the model's own is accepted (no model here can shorten its vectors). */
  dimensions?: number;
}

export interface EmbeddingBatch {
  /** One unit-length vector per input, in order. */
  vectors: Float32Array[];
  /** Tokens evaluated, begin and end tokens included. */
  promptTokens: number;
  dimensions: number;
}

/** Remembers measured thread counts across restarts (the engine's table). */
export interface ThreadMemory {
  get(key: string): number | undefined;
  set(key: string, threads: number): void;
}

const PROBE_TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(4);

/**
 * Embedding models run through node-llama-cpp's embedding context. Each model is loaded by the
 * engine (one loader, one memory budget with the chat models) and holds `parallel` embedding
 * contexts: node-llama-cpp evaluates one input per context at a time, so an array of inputs is
 * spread over the contexts and evaluated concurrently, and further inputs wait for a free one.
 */
export class Embeddings {
  private readonly models = new Map<string, Promise<EmbeddingModel>>();

  constructor(
    private readonly engine: Engine,
    private readonly settings: () => EmbeddingSettings,
    private readonly log: Logger,
    private readonly threadMemory?: ThreadMemory,
  ) {}

  async embed(info: ModelFile, texts: string[], options: EmbedOptions = {}): Promise<EmbeddingBatch> {
    if (!info.capabilities.includes('embedding')) {
      throw new HearthError(
        'model_not_embedding',
        `${info.id} is a chat model and does not produce embeddings. Use a model listed with the embedding capability.`,
        {
          param: 'model',
        },
      );
    }
    const model = await this.load(info);
    return model.embed(texts, options);
  }

  /** The vector size of a model, loading it if needed. */
  async dimensions(info: ModelFile): Promise<number> {
    return (await this.embed(info, ['probe'], { truncate: true })).dimensions;
  }

  /** The loaded model; one the engine let go (idle, memory pressure, unload) or whose file changed is loaded again. */
  private async load(info: ModelFile): Promise<EmbeddingModel> {
    const pending = this.models.get(info.id);
    if (pending) {
      const model = await pending;
      if (!model.disposed && model.stamp === stampOf(info)) return model;
      if (this.models.get(info.id) === pending) {
        this.models.delete(info.id);
        if (!model.disposed) await this.engine.unload(info.id);
      }
      return this.load(info);
    }
    const opening = this.open(info);
    this.models.set(info.id, opening);
    opening.catch(() => {
      if (this.models.get(info.id) === opening) this.models.delete(info.id);
    });
    return opening;
  }

  private async open(info: ModelFile): Promise<EmbeddingModel> {
    const defaults = this.settings();
    const settings = { ...defaults, ...loadOptionsFor(defaults, info.id) };
    const resident = await this.engine.loadResident(info, async (llama, model) => {
      const contextSize = Math.min(settings.contextSize, model.trainContextSize);
      const threads = await this.chooseThreads(info, llama, model, contextSize, settings.threads);
      // Contexts run at once, each with its threads: more than the cores hold only contend.
      const count = Math.max(1, Math.min(settings.parallel === 'auto' ? Infinity : settings.parallel, Math.floor(llama.cpuMathCores / threads)));
      const contexts: LlamaEmbeddingContext[] = [];
      try {
        for (let index = 0; index < count; index++) {
          contexts.push(await model.createEmbeddingContext({ contextSize, batchSize: contextSize, threads }));
        }
      } catch (error) {
        await Promise.all(contexts.map((context) => context.dispose()));
        throw error;
      }
      this.log.info({ model: info.id, threads, contextSize, contexts: contexts.length }, 'embedding model loaded');
      return new EmbeddingModel(
        info,
        model,
        contexts,
        { threads, contextSize, queueLimit: settings.queueLimit, idleUnloadSeconds: settings.idleUnloadSeconds },
        () => this.engine.unload(info.id),
      );
    });
    return resident as EmbeddingModel;
  }

  /** Inputs are evaluated as one batch, so more threads usually help; measured once per model file. */
  private async chooseThreads(info: ModelFile, llama: Llama, model: LlamaModel, contextSize: number, setting: number | 'auto'): Promise<number> {
    if (setting !== 'auto') return setting;
    const key = `embedding:${info.path}:${info.sizeBytes}`;
    const remembered = this.threadMemory?.get(key);
    if (remembered) return remembered;
    const speeds: Record<number, number> = {};
    for (const threads of threadCandidates(llama.cpuMathCores)) {
      const context = await model.createEmbeddingContext({ contextSize: Math.min(contextSize, 256), threads });
      try {
        await context.getEmbeddingFor(PROBE_TEXT);
        const started = performance.now();
        for (let round = 0; round < 3; round++) await context.getEmbeddingFor(PROBE_TEXT);
        speeds[threads] = 3000 / (performance.now() - started);
      } finally {
        await context.dispose();
      }
    }
    const best = Number(Object.entries(speeds).sort(([, a], [, b]) => b - a)[0]![0]);
    this.log.info({ model: info.id, embeddingsPerSecond: speeds, threads: best }, 'measured embedding thread counts');
    this.threadMemory?.set(key, best);
    return best;
  }
}

interface ModelSettings {
  threads: number;
  contextSize: number;
  queueLimit: number;
  idleUnloadSeconds: number;
}

/** One loaded embedding model and its contexts; the engine accounts for it as a Resident. */
class EmbeddingModel implements Resident {
  readonly id: string;
  readonly stamp: string;
  readonly bytes: number;
  disposed = false;
  private readonly free: LlamaEmbeddingContext[];
  private readonly waiting: { resolve: (context: LlamaEmbeddingContext) => void; reject: (error: unknown) => void }[] = [];
  private used = Date.now();
  private idleTimer?: NodeJS.Timeout;
  private dimensionsKnown: number;

  constructor(
    info: ModelFile,
    private readonly model: LlamaModel,
    private readonly contexts: LlamaEmbeddingContext[],
    private readonly settings: ModelSettings,
    private readonly unloadSelf: () => Promise<boolean>,
  ) {
    this.id = info.id;
    this.stamp = stampOf(info);
    this.bytes = estimateBytes(info);
    this.free = [...contexts];
    this.dimensionsKnown = model.embeddingVectorSize;
  }

  busy(): number {
    return this.contexts.length - this.free.length;
  }

  lastUsed(): number {
    return this.used;
  }

  status(): Omit<LoadedStatus, 'engine' | 'engineReason'> {
    return {
      id: this.id,
      threads: this.settings.threads,
      threadChoices: [],
      steps: 0,
      contextSize: this.settings.contextSize,
      sequences: this.contexts.length,
      busy: this.busy(),
      queued: this.waiting.length,
      generatedTokens: 0,
    };
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    clearTimeout(this.idleTimer);
    for (const waiter of this.waiting.splice(0))
      waiter.reject(new HearthError('server_busy', `${this.id} was unloaded while this request waited. Retry.`, { retryAfter: 1 }));
    await Promise.all(this.contexts.map((context) => context.dispose()));
    await this.model.dispose();
  }

  async embed(texts: string[], options: EmbedOptions): Promise<EmbeddingBatch> {
    const param = options.param ?? 'input';
    if (options.dimensions !== undefined && options.dimensions !== this.dimensionsKnown) {
      throw new HearthError(
        'invalid_request_error',
        `dimensions ${options.dimensions} is not supported by ${this.id}: it always returns ${this.dimensionsKnown}-dimensional vectors. Leave dimensions out.`,
        { param: 'dimensions' },
      );
    }
    const inputs = texts.map((text, index) => this.prepare(text, `${param}[${index}]`, options.truncate === true));
    if (this.waiting.length >= this.settings.queueLimit) {
      throw new HearthError(
        'rate_limit_exceeded',
        `The embedding contexts of ${this.id} are busy and ${this.waiting.length} inputs are waiting. Retry shortly.`,
        {
          retryAfter: 1,
        },
      );
    }
    const vectors: Float32Array[] = new Array(inputs.length);
    let next = 0;
    const worker = async () => {
      while (next < inputs.length) {
        const index = next++;
        options.signal?.throwIfAborted();
        vectors[index] = await this.evaluate(inputs[index]!.text);
      }
    };
    this.touch();
    try {
      await Promise.all(Array.from({ length: Math.min(this.contexts.length, inputs.length) }, worker));
    } finally {
      this.touch();
    }
    return { vectors, promptTokens: inputs.reduce((sum, input) => sum + input.tokens, 0), dimensions: this.dimensionsKnown };
  }

  /** Counts an input's tokens (begin and end tokens included) and refuses or cuts one that does not fit. */
  private prepare(text: string, at: string, truncate: boolean): { text: string; tokens: number } {
    if (text.length === 0) throw new HearthError('invalid_request_error', `${at} is empty; every input needs some text.`, { param: at });
    const context = this.contexts[0]!;
    const tokens = context.calculateInputLength(text);
    // node-llama-cpp needs one position to spare.
    const room = this.settings.contextSize - 1;
    if (tokens <= room) return { text, tokens };
    if (!truncate) {
      throw new HearthError(
        'context_length_exceeded',
        `${at} has ${tokens} tokens, but ${this.id} embeds at most ${room} tokens per input. Split the text into shorter pieces.`,
        { param: at },
      );
    }
    // The opening of a long text carries most of its topic; the special tokens take the rest.
    const plain = this.model.tokenize(text);
    const cut = this.model.detokenize(plain.slice(0, Math.max(1, room - (tokens - plain.length))));
    return { text: cut, tokens: context.calculateInputLength(cut) };
  }

  private async evaluate(text: string): Promise<Float32Array> {
    const context = await this.acquire();
    try {
      const vector = Float32Array.from((await context.getEmbeddingFor(text)).vector);
      this.dimensionsKnown = vector.length;
      return normalize(vector);
    } finally {
      this.release(context);
    }
  }

  private acquire(): Promise<LlamaEmbeddingContext> {
    if (this.disposed) return Promise.reject(new HearthError('server_busy', `${this.id} was unloaded. Retry.`, { retryAfter: 1 }));
    const context = this.free.pop();
    if (context) return Promise.resolve(context);
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  private release(context: LlamaEmbeddingContext): void {
    const next = this.waiting.shift();
    if (next) next.resolve(context);
    else this.free.push(context);
  }

  private touch(): void {
    this.used = Date.now();
    clearTimeout(this.idleTimer);
    if (this.settings.idleUnloadSeconds <= 0 || this.disposed) return;
    this.idleTimer = setTimeout(() => {
      if (this.busy() === 0) void this.unloadSelf();
      else this.touch();
    }, this.settings.idleUnloadSeconds * 1000);
    this.idleTimer.unref();
  }
}

/** Unit length, as OpenAI's embeddings are (cosine similarity is then a dot product). */
function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const value of vector) sum += value * value;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let index = 0; index < vector.length; index++) vector[index] = vector[index]! / norm;
  return vector;
}

function stampOf(info: ModelFile): string {
  return `${info.path}:${info.sizeBytes}`;
}
