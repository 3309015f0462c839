import { availableParallelism } from 'node:os';

/** How one model is loaded: its own settings (config's `models.overrides`) over the engine's defaults. */
export interface ModelLoadOptions {
  contextSize: number;
  threads: number | 'auto';
  parallel: number | 'auto';
  /** Layers offloaded to the GPU: 'auto' fits what the GPU memory holds (node-llama-cpp's default); 0 keeps the model on the CPU. */
  gpuLayers: number | 'auto';
  /** A draft model for speculative decoding (a local model id; llama-server engine only). */
  draft?: string;
}

/** Model id -> the load options it sets itself. */
export type ModelOverrides = Record<string, Partial<ModelLoadOptions>>;

/** A thread count, at most the cores this process may run on: more threads than cores only wait for each other. */
export function threadsWithin(threads: number | 'auto', cores = availableParallelism()): number | 'auto' {
  return threads === 'auto' ? threads : Math.max(1, Math.min(threads, cores));
}

/** The options a model loads with: the engine's, with what its own entry sets in their place, threads capped at the cores. */
export function loadOptionsFor(
  defaults: Omit<ModelLoadOptions, 'gpuLayers'> & { overrides?: ModelOverrides },
  id: string,
  cores = availableParallelism(),
): ModelLoadOptions {
  const own = defaults.overrides?.[id] ?? {};
  return {
    contextSize: own.contextSize ?? defaults.contextSize,
    threads: threadsWithin(own.threads ?? defaults.threads, cores),
    parallel: own.parallel ?? defaults.parallel,
    gpuLayers: own.gpuLayers ?? 'auto',
    ...(own.draft && own.draft !== 'none' ? { draft: own.draft } : {}),
  };
}
