import type { MemorySettings } from '#shared/api/config.js';

/** docs/memory.md (Settings): each field's default and the range a saved value is normalised into. */
export const MEMORY_RANGES = {
  memory_budget_tokens: { default: 800, minimum: 100, maximum: 4000, integer: true },
  summary_debounce_seconds: { default: 60, minimum: 10, maximum: 3600, integer: true },
  consolidation_interval_hours: { default: 24, minimum: 1, maximum: 168, integer: false },
  salience_floor: { default: 0.2, minimum: 0, maximum: 1, integer: false },
  episode_retention_days: { default: 365, minimum: 0, maximum: 3650, integer: true },
} as const;

export type RangedField = keyof typeof MEMORY_RANGES;

/** Clamps a number into the field's range (integers rounded); anything not a finite number becomes the default. */
export function normaliseField(field: RangedField, value: unknown): number {
  const range = MEMORY_RANGES[field];
  if (typeof value !== 'number' || !Number.isFinite(value)) return range.default;
  const rounded = range.integer ? Math.round(value) : value;
  return Math.min(range.maximum, Math.max(range.minimum, rounded));
}

/**
 * Normalises the `memory` section of a validated configuration document in place: out-of-range
 * values are clamped into range rather than refused (docs/memory.md), so the saved value governs.
 */
export function normaliseMemorySettings(section: Partial<MemorySettings> | undefined): MemorySettings {
  const target = (section ?? {}) as Partial<MemorySettings>;
  for (const field of Object.keys(MEMORY_RANGES) as RangedField[]) target[field] = normaliseField(field, target[field]);
  return target as MemorySettings;
}
