import type { ConfigDocument, ModelOverride, ModelSettings } from '#shared/api/config.js';
import { isObject } from '../json.js';
import { settingsWith } from './settings-table.js';

/** How a model loads: its own entry in `models.overrides`, and the models section for what that leaves out. */
export type ModelLoadSettings = Required<ModelOverride>;

export function modelLoadSettings(models: ModelSettings, id: string): ModelLoadSettings {
  const own = models.overrides[id] ?? {};
  return {
    context_size: own.context_size ?? models.context_size,
    gpu_layers: own.gpu_layers ?? 'auto',
    threads: own.threads ?? models.threads,
    parallel: own.parallel ?? models.parallel,
    projector: own.projector ?? 'auto',
    draft: own.draft ?? 'none',
  };
}

/**
 * The loaded models a change leaves on their old settings: a model keeps the settings it was
 * loaded with until it is unloaded (idle, memory pressure, or by hand) and loaded again. Which
 * settings those are is the settings table's `reload` rows.
 */
export function reloadRequired(before: ConfigDocument, after: ConfigDocument, loaded: string[]): string[] {
  const same = (id: string) => JSON.stringify(loadValues(before, id)) === JSON.stringify(loadValues(after, id));
  return loaded.filter((id) => !same(id));
}

/** Every `reload` setting as it applies to one model: its own overrides over the section, then the rest of the rows. */
function loadValues(document: ConfigDocument, id: string): Record<string, unknown> {
  const own = modelLoadSettings(document.models, id);
  // models.context_size, threads, parallel count through the model's own settings (an override shadows them).
  const shadowed = new Set(['models.overrides', ...Object.keys(own).map((key) => `models.${key}`)]);
  const values: Record<string, unknown> = { ...own };
  for (const path of settingsWith('reload')) if (!shadowed.has(path)) values[path] = valueAt(document, path);
  return values;
}

function valueAt(document: ConfigDocument, path: string): unknown {
  return path.split('.').reduce<unknown>((value, key) => (isObject(value) ? value[key] : undefined), document);
}

/** Model id -> the projector its overrides name (`models.overrides.<id>.projector`: a path, or 'none'). */
export function projectorOverrides(document: ConfigDocument): Record<string, string> {
  const named: Record<string, string> = {};
  for (const [id, own] of Object.entries(document.models.overrides)) if (own.projector) named[id] = own.projector;
  return named;
}
