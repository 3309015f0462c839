/** How one model is loaded: its own settings (config's `models.overrides`) over the engine's defaults. */
export interface ModelLoadOptions {
  contextSize: number;
  threads: number | 'auto';
  parallel: number | 'auto';
  /** Layers offloaded to the GPU: 'auto' fits what the GPU memory holds (node-llama-cpp's default); 0 keeps the model on the CPU. */
  gpuLayers: number | 'auto';
}

/** Model id -> the load options it sets itself. */
export type ModelOverrides = Record<string, Partial<ModelLoadOptions>>;

/** The options a model loads with: the engine's, with what its own entry sets in their place. */
export function loadOptionsFor(defaults: Omit<ModelLoadOptions, 'gpuLayers'> & { overrides?: ModelOverrides }, id: string): ModelLoadOptions {
  const own = defaults.overrides?.[id] ?? {};
  return {
    contextSize: own.contextSize ?? defaults.contextSize,
    threads: own.threads ?? defaults.threads,
    parallel: own.parallel ?? defaults.parallel,
    gpuLayers: own.gpuLayers ?? 'auto',
  };
}
