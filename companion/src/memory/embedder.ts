import type { LlamaEmbeddingContext, LlamaModel } from 'node-llama-cpp';
import type { ModelCatalog } from '../models/catalog.js';
import { loadLlama, type GpuSetting } from '../inference/llama.js';
import type { Logger } from '../logger.js';

/** Turns texts into vectors of a fixed size. */
export interface Embedder {
  /** `<model id>:<dimensions>`: vectors of different keys are never compared. */
  key: string;
  dimensions: number;
  embed(text: string): Promise<Float32Array>;
}

export interface EmbeddingModels {
  /** The configured embedding model, loaded; undefined when none is configured or it cannot load. */
  embedder(): Promise<Embedder | undefined>;
  close(): Promise<void>;
}

const CONTEXT_TOKENS = 512;

/**
 * The configured local embedding model, loaded on first use with node-llama-cpp's embedding
 * context (kept beside the chat engine: an embedding context is small and always batch-free).
 */
export function localEmbeddingModels(options: {
  catalog: ModelCatalog;
  modelId: () => string | undefined;
  gpu: () => GpuSetting;
  threads: () => number | 'auto';
  log: Logger;
}): EmbeddingModels {
  let loaded: { id: string; model: LlamaModel; context: LlamaEmbeddingContext; embedder: Embedder } | undefined;
  let loading: Promise<typeof loaded> | undefined;
  const failed = new Set<string>();

  const load = async (id: string) => {
    const target = await options.catalog.resolve(id).catch(() => undefined);
    if (!target || target.kind !== 'local') return undefined;
    const llama = await loadLlama(options.gpu());
    const model = await llama.loadModel({ modelPath: target.info.path });
    const threads = options.threads();
    const context = await model.createEmbeddingContext({
      contextSize: Math.min(CONTEXT_TOKENS, model.trainContextSize),
      ...(threads === 'auto' ? {} : { threads }),
    });
    const probe = await context.getEmbeddingFor('probe');
    const dimensions = probe.vector.length;
    const room = Math.min(CONTEXT_TOKENS, model.trainContextSize) - 8;
    const embedder: Embedder = {
      key: `${id}:${dimensions}`,
      dimensions,
      async embed(text) {
        // Long texts are cut to the context: the opening carries most of a turn's topic.
        const tokens = model.tokenize(text);
        const input = tokens.length > room ? model.detokenize(tokens.slice(0, room)) : text;
        return Float32Array.from((await context.getEmbeddingFor(input)).vector);
      },
    };
    return { id, model, context, embedder };
  };

  return {
    async embedder() {
      const id = options.modelId();
      if (!id || failed.has(id)) return undefined;
      if (loaded?.id === id) return loaded.embedder;
      if (loaded) {
        await loaded.context.dispose();
        await loaded.model.dispose();
        loaded = undefined;
      }
      loading ??= load(id)
        .catch((error: unknown) => {
          failed.add(id);
          options.log.warn({ err: error, model: id }, 'memory embedding model could not be loaded; search stays lexical');
          return undefined;
        })
        .finally(() => {
          loading = undefined;
        });
      loaded = await loading;
      return loaded?.embedder;
    },
    async close() {
      await loading?.catch(() => undefined);
      if (loaded) {
        await loaded.context.dispose();
        await loaded.model.dispose();
        loaded = undefined;
      }
    },
  };
}
