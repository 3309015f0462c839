/**
 * web-llm (MLC, WebGPU). Its models are MLC-compiled weights plus a model library that
 * web-llm downloads into the browser's Cache Storage on first use. This engine detects
 * WebGPU and the shader-f16 feature, lists which models are cached, downloads with
 * progress when the network allows, and otherwise says plainly why a model cannot run.
 */
import type * as WebLlm from '@mlc-ai/web-llm';
import type { MLCEngine } from '@mlc-ai/web-llm';
import prebuiltModels, { cacheBackend, type WebLlmModel } from 'virtual:webllm-models';
import { EngineError, type BrowserModel, type EngineChatRequest, type EngineChatResult, type EngineStatus, type LoadProgress } from './types';
import { OneModelEngine } from './one-model';
import { readReply } from './reply';

interface GpuProbe {
  adapter: boolean;
  f16: boolean;
  description: string | null;
  error: string | null;
}

type GpuNavigator = Navigator & { gpu?: { requestAdapter(options?: object): Promise<GpuAdapterLike | null> } };
interface GpuAdapterLike {
  features: ReadonlySet<string>;
  info?: { vendor?: string; architecture?: string; description?: string; device?: string };
}

/** Whether WebGPU gives an adapter here, and whether it has shader-f16. */
export async function probeWebGpu(nav: GpuNavigator = navigator as GpuNavigator): Promise<GpuProbe> {
  if (!nav.gpu) return { adapter: false, f16: false, description: null, error: 'This browser does not offer WebGPU (navigator.gpu is missing).' };
  try {
    const adapter = await nav.gpu.requestAdapter({ powerPreference: 'high-performance' });
    if (!adapter)
      return { adapter: false, f16: false, description: null, error: 'WebGPU is present but no GPU adapter is available (it may be disabled or blocklisted).' };
    const info = adapter.info ?? {};
    const description = [info.vendor, info.architecture, info.description || info.device].filter(Boolean).join(' · ') || 'unnamed adapter';
    return { adapter: true, f16: adapter.features.has('shader-f16'), description, error: null };
  } catch (error) {
    return { adapter: false, f16: false, description: null, error: `Asking for a WebGPU adapter failed: ${(error as Error).message}` };
  }
}

/** Where web-llm keeps model weights with its default backend (Cache Storage). */
const MODEL_CACHE = 'webllm/model';

/**
 * Every URL in web-llm's model cache, read at once; null when the backend is not Cache Storage
 * (then each model is asked about on its own). A model none of whose files is there is not stored:
 * web-llm's own check (hasModelInCache: the tensor list, then every shard) is needed only for the rest.
 */
async function cachedUrls(backend: string | undefined): Promise<string[] | null> {
  if ((backend ?? 'cache') !== 'cache' || typeof caches === 'undefined') return null;
  try {
    if (!(await caches.has(MODEL_CACHE))) return [];
    return (await (await caches.open(MODEL_CACHE)).keys()).map((request) => request.url);
  } catch {
    return null;
  }
}

/** f16 weights (q4f16, q0f16, …) need shader-f16 even where the record does not say so. */
const needsF16 = (record: Pick<WebLlmModel, 'model_id'> & { required_features?: string[] }) =>
  (record.required_features?.includes('shader-f16') ?? false) || /q\d+f16/.test(record.model_id);
/** The URL prefix of every file web-llm caches for a model. */
const folderOf = (record: WebLlmModel) => record.model.replace(/\/?$/, '/');

export class WebLlmEngine extends OneModelEngine<MLCEngine> {
  readonly kind = 'webllm' as const;
  #probe: Promise<GpuProbe> | null = null;
  #module: Promise<typeof WebLlm> | null = null;

  #gpu(): Promise<GpuProbe> {
    this.#probe ??= probeWebGpu();
    return this.#probe;
  }

  /** web-llm itself, loaded once (a failed load is tried again next time). */
  #webllm(): Promise<typeof WebLlm> {
    this.#module ??= import('@mlc-ai/web-llm').catch((error: unknown) => {
      this.#module = null;
      throw error;
    });
    return this.#module;
  }

  async status(): Promise<EngineStatus> {
    const gpu = await this.#gpu();
    return {
      kind: this.kind,
      available: gpu.adapter,
      reason:
        gpu.error ?? (gpu.f16 ? null : 'This graphics card lacks half-precision support (shader-f16), so only the full-precision (q4f32) models can run.'),
      details: { webgpu: gpu.adapter, adapter: gpu.description, 'shader-f16': gpu.f16, loaded: this.loaded },
    };
  }

  /**
   * The models web-llm can run, listed without loading web-llm: the list was read at build time,
   * and one look at the cache finds the models that have files there. Only those (none, until
   * something was downloaded) get web-llm's own check that every file is present.
   */
  async models(): Promise<BrowserModel[]> {
    const gpu = await this.#gpu();
    if (!gpu.adapter) return [];
    const stored = await this.#stored(prebuiltModels);
    return prebuiltModels.map((record): BrowserModel => {
      const f16Missing = needsF16(record) && !gpu.f16;
      return {
        engine: this.kind,
        id: record.model_id,
        name: record.model_id,
        sizeBytes: record.vram_required_MB ? Math.round(record.vram_required_MB * 1024 * 1024) : null,
        stored: stored.has(record.model_id),
        runnable: !f16Missing,
        reason: f16Missing ? 'Needs half-precision support (shader-f16), which this graphics card lacks.' : null,
        origin: null,
      };
    });
  }

  /** Which of these models have every file in the cache. */
  async #stored(records: WebLlmModel[]): Promise<Set<string>> {
    const present = await cachedUrls(cacheBackend);
    const candidates = present === null ? records : records.filter((record) => present.some((url) => url.startsWith(folderOf(record))));
    const stored = new Set<string>();
    if (candidates.length === 0) return stored;
    const webllm = await this.#webllm().catch(() => undefined);
    if (!webllm) return stored;
    const checked = await Promise.all(candidates.map((record) => webllm.hasModelInCache(record.model_id).catch(() => false)));
    candidates.forEach((record, index) => checked[index] && stored.add(record.model_id));
    return stored;
  }

  async load(model: string, onProgress: (progress: LoadProgress) => void): Promise<void> {
    if (this.loaded === model && this.instance) return;
    const gpu = await this.#gpu();
    if (!gpu.adapter) throw new EngineError(`${model} cannot run: ${gpu.error}`, 'unavailable');
    const record = prebuiltModels.find((candidate) => candidate.model_id === model);
    if (!record) throw new EngineError(`web-llm does not know a model called ${model}.`, 'load_failed');
    if (needsF16(record) && !gpu.f16) {
      throw new EngineError(
        `${model} needs the WebGPU feature shader-f16, which this adapter (${gpu.description}) does not have. Pick a q4f32 model instead.`,
        'unavailable',
      );
    }
    const cached = (await this.#stored([record])).has(model);
    if (!cached && !navigator.onLine) {
      const size = record.vram_required_MB ? `about ${((record.vram_required_MB * 1048576) / 1e9).toFixed(1)} GB` : 'its full size';
      throw new EngineError(
        `${model} is not stored in this browser and the network is off. Connect once to download it (${size}); after that it works offline.`,
        'offline',
      );
    }
    await this.unload();
    try {
      const webllm = await this.#webllm();
      this.instance = await webllm.CreateMLCEngine(model, {
        initProgressCallback: (report) => onProgress({ fraction: report.progress, text: report.text }),
      });
      this.loaded = model;
    } catch (error) {
      this.instance = null;
      const reason = (error as Error).message;
      const download = !cached ? ` Its files could not be downloaded from ${new URL(record.model).host}; check the network.` : '';
      throw new EngineError(`${model} could not be started: ${reason}.${download}`, cached ? 'load_failed' : 'offline');
    }
  }

  async chat(request: EngineChatRequest, onDelta: (text: string) => void, signal: AbortSignal): Promise<EngineChatResult> {
    await this.load(request.model, () => undefined);
    const engine = this.instance!;
    const stop = () => void engine.interruptGenerate();
    signal.addEventListener('abort', stop, { once: true });
    let result: EngineChatResult;
    try {
      const chunks = await engine.chat.completions.create({
        messages: request.messages,
        stream: true,
        stream_options: { include_usage: true },
        temperature: request.temperature,
        top_p: request.top_p,
        max_tokens: request.max_tokens,
      });
      result = await readReply(chunks, onDelta, (chunk, into) => {
        const extra = chunk.usage?.extra as { decode_tokens_per_s?: number } | undefined;
        if (chunk.usage) into.tokensPerSecond = extra?.decode_tokens_per_s ?? null;
      });
    } finally {
      signal.removeEventListener('abort', stop);
    }
    signal.throwIfAborted();
    return result;
  }

  protected close(engine: MLCEngine): Promise<void> {
    return engine.unload();
  }

  protected async deleteStored(model: string): Promise<void> {
    const { deleteModelAllInfoInCache } = await this.#webllm();
    await deleteModelAllInfoInCache(model);
  }
}
