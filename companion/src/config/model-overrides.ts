import type { ConfigDocument, ModelOverride, ModelSettings } from '#shared/api/config.js';

/** How a model loads: its own entry in `models.overrides`, and the models section for what that leaves out. */
export type ModelLoadSettings = Required<ModelOverride>;

export function modelLoadSettings(models: ModelSettings, id: string): ModelLoadSettings {
  const own = models.overrides[id] ?? {};
  return {
    context_size: own.context_size ?? models.context_size,
    gpu_layers: own.gpu_layers ?? 'auto',
    threads: own.threads ?? models.threads,
    parallel: own.parallel ?? models.parallel,
  };
}

/**
 * The loaded models a change leaves on their old load settings: a model keeps the settings it was
 * loaded with until it is unloaded (idle, memory pressure, or by hand) and loaded again.
 */
export function reloadRequired(before: ConfigDocument, after: ConfigDocument, loaded: string[]): string[] {
  const same = (id: string) => JSON.stringify(modelLoadSettings(before.models, id)) === JSON.stringify(modelLoadSettings(after.models, id));
  return loaded.filter((id) => !same(id));
}
