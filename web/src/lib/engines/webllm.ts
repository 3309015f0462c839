/**
 * web-llm (MLC, WebGPU). Its models are MLC-compiled weights plus a model library that
 * web-llm downloads into the browser's Cache Storage on first use. This engine detects
 * WebGPU and the shader-f16 feature, lists which models are cached, downloads with
 * progress when the network allows, and otherwise says plainly why a model cannot run.
 */
import type { MLCEngine, ModelRecord } from '@mlc-ai/web-llm';
import {
  EngineError,
  type BrowserEngine,
  type BrowserModel,
  type EngineChatRequest,
  type EngineChatResult,
  type EngineStatus,
  type LoadProgress,
} from './types';

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

const isChatModel = (record: ModelRecord) => record.model_type === undefined || record.model_type === 0;
/** f16 weights (q4f16, q0f16, …) need shader-f16 even where the record does not say so. */
const needsF16 = (record: ModelRecord) => (record.required_features?.includes('shader-f16') ?? false) || /q\d+f16/.test(record.model_id);

export class WebLlmEngine implements BrowserEngine {
  readonly kind = 'webllm' as const;
  #probe: Promise<GpuProbe> | null = null;
  #engine: MLCEngine | null = null;
  #loaded: string | null = null;

  #gpu(): Promise<GpuProbe> {
    this.#probe ??= probeWebGpu();
    return this.#probe;
  }

  async status(): Promise<EngineStatus> {
    const gpu = await this.#gpu();
    return {
      kind: this.kind,
      available: gpu.adapter,
      reason: gpu.error ?? (gpu.f16 ? null : 'The WebGPU adapter lacks shader-f16, so only the f32 (q4f32) models can run.'),
      details: { webgpu: gpu.adapter, adapter: gpu.description, 'shader-f16': gpu.f16, loaded: this.#loaded },
    };
  }

  async models(): Promise<BrowserModel[]> {
    const gpu = await this.#gpu();
    if (!gpu.adapter) return [];
    const { prebuiltAppConfig, hasModelInCache } = await import('@mlc-ai/web-llm');
    const records = prebuiltAppConfig.model_list.filter(isChatModel);
    return Promise.all(
      records.map(async (record): Promise<BrowserModel> => {
        const f16Missing = needsF16(record) && !gpu.f16;
        return {
          engine: this.kind,
          id: record.model_id,
          name: record.model_id,
          sizeBytes: record.vram_required_MB ? Math.round(record.vram_required_MB * 1024 * 1024) : null,
          stored: await hasModelInCache(record.model_id).catch(() => false),
          runnable: !f16Missing,
          reason: f16Missing ? 'Needs the WebGPU feature shader-f16, which this adapter lacks.' : null,
          origin: null,
        };
      }),
    );
  }

  async load(model: string, onProgress: (progress: LoadProgress) => void): Promise<void> {
    if (this.#loaded === model && this.#engine) return;
    const gpu = await this.#gpu();
    if (!gpu.adapter) throw new EngineError(`${model} cannot run: ${gpu.error}`, 'unavailable');
    const webllm = await import('@mlc-ai/web-llm');
    const record = webllm.prebuiltAppConfig.model_list.find((candidate) => candidate.model_id === model);
    if (!record) throw new EngineError(`web-llm does not know a model called ${model}.`, 'load_failed');
    if (needsF16(record) && !gpu.f16) {
      throw new EngineError(
        `${model} needs the WebGPU feature shader-f16, which this adapter (${gpu.description}) does not have. Pick a q4f32 model instead.`,
        'unavailable',
      );
    }
    const cached = await webllm.hasModelInCache(model).catch(() => false);
    if (!cached && !navigator.onLine) {
      const size = record.vram_required_MB ? `about ${((record.vram_required_MB * 1048576) / 1e9).toFixed(1)} GB` : 'its full size';
      throw new EngineError(
        `${model} is not stored in this browser and the network is off. Connect once to download it (${size}); after that it works offline.`,
        'offline',
      );
    }
    await this.unload();
    try {
      this.#engine = await webllm.CreateMLCEngine(model, {
        initProgressCallback: (report) => onProgress({ fraction: report.progress, text: report.text }),
      });
      this.#loaded = model;
    } catch (error) {
      this.#engine = null;
      const reason = (error as Error).message;
      const download = !cached ? ` Its files could not be downloaded from ${new URL(record.model).host}; check the network.` : '';
      throw new EngineError(`${model} could not be started: ${reason}.${download}`, cached ? 'load_failed' : 'offline');
    }
  }

  async chat(request: EngineChatRequest, onDelta: (text: string) => void, signal: AbortSignal): Promise<EngineChatResult> {
    await this.load(request.model, () => undefined);
    const engine = this.#engine!;
    const stop = () => void engine.interruptGenerate();
    signal.addEventListener('abort', stop, { once: true });
    const result: EngineChatResult = { text: '', finishReason: null, promptTokens: null, completionTokens: null, tokensPerSecond: null };
    try {
      const chunks = await engine.chat.completions.create({
        messages: request.messages,
        stream: true,
        stream_options: { include_usage: true },
        temperature: request.temperature,
        top_p: request.top_p,
        max_tokens: request.max_tokens,
      });
      for await (const chunk of chunks) {
        const choice = chunk.choices[0];
        const delta = choice?.delta?.content;
        if (delta) {
          result.text += delta;
          onDelta(delta);
        }
        if (choice?.finish_reason === 'stop' || choice?.finish_reason === 'length') result.finishReason = choice.finish_reason;
        if (chunk.usage) {
          result.promptTokens = chunk.usage.prompt_tokens;
          result.completionTokens = chunk.usage.completion_tokens;
          const extra = chunk.usage.extra as { decode_tokens_per_s?: number } | undefined;
          result.tokensPerSecond = extra?.decode_tokens_per_s ?? null;
        }
      }
    } finally {
      signal.removeEventListener('abort', stop);
    }
    signal.throwIfAborted();
    return result;
  }

  async unload(): Promise<void> {
    const engine = this.#engine;
    this.#engine = null;
    this.#loaded = null;
    await engine?.unload().catch(() => undefined);
  }

  async remove(model: string): Promise<void> {
    if (this.#loaded === model) await this.unload();
    const { deleteModelAllInfoInCache } = await import('@mlc-ai/web-llm');
    await deleteModelAllInfoInCache(model);
  }
}
