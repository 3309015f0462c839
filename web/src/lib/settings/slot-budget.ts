/**
 * The Server screen's disk limit for saved conversations (models.slot_cache_mb): the change it
 * saves, what it accepts, and what a saved change does, in words.
 */
import type { ApplyResult } from '#shared/api/admin-config.js';
import type { ConfigChange } from '$lib/api/settings';

/** The schema's bounds, in MB. */
export const SLOT_BUDGET_MAX_MB = 1048576;

export function slotBudgetChange(megabytes: number): ConfigChange {
  return { version: 1, models: { slot_cache_mb: megabytes } };
}

/** Why a typed value cannot be saved, or null. */
export function slotBudgetProblem(text: string): string | null {
  const value = Number(text);
  if (text.trim() === '' || !Number.isInteger(value)) return 'Give a whole number of MB (0 keeps none).';
  if (value < 0 || value > SLOT_BUDGET_MAX_MB) return `Give a number from 0 to ${SLOT_BUDGET_MAX_MB.toLocaleString()} MB.`;
  return null;
}

/** What the saved change does: in force now, or for each loaded model once it is loaded again. */
export function slotBudgetAnswer(result: Pick<ApplyResult, 'reload_required' | 'restart_required'>): string {
  const waiting = result.reload_required;
  if (waiting.length === 0) return 'Saved. It applies now.';
  return `Saved. ${waiting.join(', ')} ${waiting.length === 1 ? 'keeps' : 'keep'} the old limit until ${waiting.length === 1 ? 'it is' : 'they are'} loaded again; models loaded from now on use the new one.`;
}
