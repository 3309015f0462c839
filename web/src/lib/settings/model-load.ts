/**
 * The load settings form of one local model (Models screen): what it shows, what it checks, the
 * configuration change it saves, and its memory estimate in words. Pure functions; the store
 * (`stores/model-settings.svelte.ts`) asks the companion.
 */
import type { ModelEstimate } from '#shared/api/admin.js';
import type { ModelOverride } from '#shared/api/config.js';
import type { ConfigChange } from '$lib/api/settings';
import { formatBytes } from '$lib/stores/models.svelte';

export type LoadSettings = Required<ModelOverride>;

/** The form: each setting as a choice, and the number when one is set by hand. */
export interface LoadForm {
  contextSize: number | null;
  /** auto: as many layers as the GPU's memory holds; off: the CPU only; layers: this many. */
  gpu: 'auto' | 'off' | 'layers';
  gpuLayers: number | null;
  threads: 'auto' | 'fixed';
  threadCount: number | null;
  parallel: 'auto' | 'fixed';
  parallelCount: number | null;
  /** The draft model's id (speculative decoding), or 'none'. */
  draft: string;
}

export type LoadField = 'contextSize' | 'gpuLayers' | 'threadCount' | 'parallelCount';

/** The bounds config.yaml accepts (the companion refuses anything else). */
export const LIMITS = {
  contextSize: { min: 256, max: 1_048_576 },
  gpuLayers: { min: 1, max: 1024 },
  threadCount: { min: 1, max: 256 },
  parallelCount: { min: 1, max: 64 },
} as const;

/** The context a setting loads with: capped at what the model was trained on, when that is known. */
export const contextLoaded = (setting: number, trained: number | null): number => (trained ? Math.min(setting, trained) : setting);

/** The form for a model's settings: the context as it loads (capped at its trained context), not as written. */
export function formFrom(settings: LoadSettings, trained: number | null = null): LoadForm {
  return {
    contextSize: contextLoaded(settings.context_size, trained),
    gpu: settings.gpu_layers === 'auto' ? 'auto' : settings.gpu_layers === 0 ? 'off' : 'layers',
    gpuLayers: typeof settings.gpu_layers === 'number' && settings.gpu_layers > 0 ? settings.gpu_layers : null,
    threads: settings.threads === 'auto' ? 'auto' : 'fixed',
    threadCount: settings.threads === 'auto' ? null : settings.threads,
    parallel: settings.parallel === 'auto' ? 'auto' : 'fixed',
    parallelCount: settings.parallel === 'auto' ? null : settings.parallel,
    draft: settings.draft ?? 'none',
  };
}

const tokens = (count: number) => count.toLocaleString('en');
const whole = (value: number | null): value is number => typeof value === 'number' && Number.isInteger(value);

/** The most context the form takes: what the model was trained on (it never loads with more), else what config.yaml accepts. */
export const contextMax = (trained: number | null): number => (trained ? Math.min(trained, LIMITS.contextSize.max) : LIMITS.contextSize.max);

/** What is wrong with each field, in words; empty when the form can be saved. */
export function formProblems(form: LoadForm, trained: number | null = null): Partial<Record<LoadField, string>> {
  const problems: Partial<Record<LoadField, string>> = {};
  const check = (field: LoadField, value: number | null, missing: string, unit: string, max: number = LIMITS[field].max, why = '') => {
    const { min } = LIMITS[field];
    if (value === null || Number.isNaN(value)) problems[field] = missing;
    else if (!whole(value)) problems[field] = `Use a whole number of ${unit}.`;
    else if (value < min || value > max) problems[field] = `Use ${min.toLocaleString('en')} to ${max.toLocaleString('en')} ${unit}${why}.`;
  };
  const max = contextMax(trained);
  const why = trained && trained <= LIMITS.contextSize.max ? `: this model was trained on ${tokens(trained)}, and never uses more` : '';
  check('contextSize', form.contextSize, 'Enter the context length in tokens.', 'tokens', max, why);
  if (form.gpu === 'layers') check('gpuLayers', form.gpuLayers, 'Enter how many layers go to the GPU.', 'layers');
  if (form.threads === 'fixed') check('threadCount', form.threadCount, 'Enter how many threads to use.', 'threads');
  if (form.parallel === 'fixed') check('parallelCount', form.parallelCount, 'Enter how many requests may run at once.', 'requests');
  return problems;
}

/** The settings the form asks for, leaving out the fields that are not valid yet (the estimate then uses the saved ones). */
export function settingsOf(form: LoadForm): ModelOverride {
  const problems = formProblems(form);
  const settings: ModelOverride = {};
  if (!problems.contextSize) settings.context_size = form.contextSize!;
  if (form.gpu === 'auto') settings.gpu_layers = 'auto';
  else if (form.gpu === 'off') settings.gpu_layers = 0;
  else if (!problems.gpuLayers) settings.gpu_layers = form.gpuLayers!;
  if (form.threads === 'auto') settings.threads = 'auto';
  else if (!problems.threadCount) settings.threads = form.threadCount!;
  if (form.parallel === 'auto') settings.parallel = 'auto';
  else if (!problems.parallelCount) settings.parallel = form.parallelCount!;
  return settings;
}

/**
 * The configuration change that saves the form for model `id`: a setting equal to the default is
 * removed from the model's own entry (so it follows the defaults again), and an entry left with
 * nothing (no projector set in config.yaml either: `saved`, the entry as saved) is removed.
 */
export function changeFor(id: string, form: LoadForm, defaults: LoadSettings, saved: ModelOverride = {}, trained: number | null = null): ConfigChange {
  const wanted = settingsOf(form);
  // The default context as the model loads with it: a form at that length follows the default.
  const followed = { ...defaults, context_size: contextLoaded(defaults.context_size, trained) };
  const entry: Record<string, number | string | null> = {};
  let own = saved.projector ? 1 : 0;
  for (const key of ['context_size', 'gpu_layers', 'threads', 'parallel'] as const) {
    const value = wanted[key];
    if (value === undefined) continue;
    entry[key] = value === followed[key] ? null : value;
    if (entry[key] !== null) own++;
  }
  entry.draft = form.draft === 'none' ? null : form.draft;
  if (entry.draft !== null) own++;
  return { version: 1, models: { overrides: { [id]: own > 0 ? entry : null } } };
}

/** Whether the form says something other than the settings the model has now (its context as it loads). */
export function differs(form: LoadForm, settings: LoadSettings, trained: number | null = null): boolean {
  const wanted = settingsOf(form);
  const now = { ...settings, context_size: contextLoaded(settings.context_size, trained) };
  return (
    (['context_size', 'gpu_layers', 'threads', 'parallel'] as const).some((key) => wanted[key] !== undefined && wanted[key] !== now[key]) ||
    form.draft !== (settings.draft ?? 'none')
  );
}

/** The estimate in words: how much memory, for what, and whether it fits the budget. */
export function describeEstimate(estimate: ModelEstimate): { memory: string; fit: string } {
  const sequences = `${estimate.parallel} × ${tokens(estimate.context_size)} tokens of context`;
  const gpu = estimate.gpu_bytes > 0 ? ` ${formatBytes(estimate.gpu_bytes)} of it on the GPU (${estimate.gpu_layers} of ${estimate.total_layers} layers).` : '';
  const memory = `About ${formatBytes(estimate.memory_bytes)}: ${formatBytes(estimate.weights_bytes)} for the model and ${formatBytes(estimate.context_bytes)} for ${sequences}.${gpu}`;
  const budget = formatBytes(estimate.budget_bytes);
  const fit =
    estimate.fits === 'yes'
      ? `Fits this machine's memory budget (${budget}).`
      : estimate.fits === 'tight'
        ? `Only just fits the memory budget (${budget}): other models may be unloaded to make room.`
        : `More than the memory budget (${budget}): it will not load with these settings.`;
  return { memory, fit };
}

/** A note on the context length: what the model was trained on, and the cap when asked for more. */
export function contextNote(form: LoadForm, trained: number | null): string | null {
  if (!trained) return null;
  if (whole(form.contextSize) && form.contextSize > trained) return `This model was trained on ${tokens(trained)} tokens: it loads with ${tokens(trained)}.`;
  return `Trained on ${tokens(trained)} tokens.`;
}
