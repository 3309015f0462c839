import { HearthError } from '../errors.js';
import type { ModelCatalog } from '../models/catalog.js';
import type { Embeddings } from '../inference/embeddings.js';
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

/**
 * The configured local embedding model (`memory.embedding_model`), run by the same engine path
 * as /v1/embeddings: loaded by the engine under its memory budget, unloaded when idle and loaded
 * again on the next use. Long texts are cut to the model's context (the opening carries most of
 * a turn's topic). A model that cannot embed leaves search lexical, with one warning.
 */
export function localEmbeddingModels(options: {
  catalog: ModelCatalog;
  embeddings: Embeddings;
  modelId: () => string | undefined;
  log: Logger;
}): EmbeddingModels {
  const failed = new Set<string>();
  let current: { id: string; embedder: Embedder } | undefined;

  const open = async (id: string): Promise<Embedder> => {
    const target = await options.catalog.resolve(id);
    if (target.kind !== 'local') throw new Error(`${id} is a provider model; memory only uses local models.`);
    const info = target.info;
    const dimensions = await options.embeddings.dimensions(info);
    return {
      key: `${id}:${dimensions}`,
      dimensions,
      embed: async (text) => (await options.embeddings.embed(info, [text], { truncate: true })).vectors[0]!,
    };
  };

  return {
    async embedder() {
      const id = options.modelId();
      if (!id || failed.has(id)) return undefined;
      if (current?.id === id) return current.embedder;
      try {
        current = { id, embedder: await open(id) };
        return current.embedder;
      } catch (error) {
        // A full memory budget or queue passes; anything else waits for a configuration change.
        if (!(error instanceof HearthError && (error.code === 'server_busy' || error.code === 'rate_limit_exceeded'))) failed.add(id);
        options.log.warn({ err: error, model: id }, 'memory embedding model could not be used; search stays lexical');
        return undefined;
      }
    },
    async close() {
      // The engine owns the loaded model and releases it when it closes.
      current = undefined;
    },
  };
}
