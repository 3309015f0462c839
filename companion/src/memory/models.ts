import type { ModelCatalog } from '../models/catalog.js';
import type { Engine } from '../inference/engine.js';
import type { StopReason } from '../inference/types.js';
import type { JsonSchema } from '#shared/api/openai.js';

export interface ExtractionCall {
  system: string;
  prompt: string;
  schema: JsonSchema;
  maxTokens: number;
  signal: AbortSignal;
}

/** A model that can run the extraction pass now. */
export interface ExtractionRunner {
  id: string;
  /** Tokens of context the model runs with (prompt and answer together). */
  contextSize: number;
  run(call: ExtractionCall): Promise<{ text: string; finishReason: StopReason }>;
}

export interface MemoryModels {
  /** The configured memory model when it can run; undefined when none is configured or it is unusable. */
  extraction(): Promise<ExtractionRunner | undefined>;
}

export interface LocalModelsOptions {
  catalog: ModelCatalog;
  engine: Engine;
  /** The configured memory model id (read at each use, so a changed configuration applies). */
  modelId: () => string | undefined;
  contextSize: () => number;
}

/** The memory model from the local catalog: only local chat models (memory never leaves the machine). */
export function localMemoryModels(options: LocalModelsOptions): MemoryModels {
  return {
    async extraction() {
      const id = options.modelId();
      if (!id) return undefined;
      const target = await options.catalog.resolve(id).catch(() => undefined);
      if (!target || target.kind !== 'local') return undefined;
      const info = target.info;
      if (!info.capabilities.includes('chat') || options.engine.loadError(info)) return undefined;
      return {
        id,
        contextSize: Math.min(options.contextSize(), info.contextLength ?? options.contextSize()),
        async run(call) {
          const result = await options.engine.run(info, {
            model: id,
            history: [
              { role: 'system', text: call.system },
              { role: 'user', text: call.prompt },
            ],
            maxTokens: call.maxTokens,
            sampling: { temperature: 0.2 },
            stop: [],
            tools: [],
            toolMode: { type: 'none' },
            output: { type: 'json', schema: call.schema },
            signal: call.signal,
          });
          return { text: result.text, finishReason: result.finishReason };
        },
      };
    },
  };
}
