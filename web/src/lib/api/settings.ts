/**
 * The owner's settings (signed in only): the configuration read and changed through the
 * companion's plan/apply routes, so config.yaml stays the one source and its rules (high-risk
 * confirmation, exposure only with keys) apply, and a model's memory estimate for proposed
 * load settings.
 */
import type { ModelEstimate } from '#shared/api/admin.js';
import type { ApplyResult, ConfigPlan } from '#shared/api/admin-config.js';
import type { ConfigDocument, ModelOverride } from '#shared/api/config.js';
import { request } from './client';

/** A change: the parts of the configuration to set; a null removes a setting (back to its default). */
export type ConfigChange = { version: 1 } & Record<string, unknown>;

export function readConfig(): Promise<ConfigDocument> {
  return request<ConfigDocument>('/admin/config/export?format=json', { cache: 'no-store' });
}

/** What a change would do and its risks; nothing is changed. A refused change rejects with `config_invalid` and its problems. */
export function planChange(document: ConfigChange): Promise<ConfigPlan> {
  return request<ConfigPlan>('/admin/config/plan', { method: 'POST', body: JSON.stringify({ document, prune: false }) });
}

/** Applies a change; a high-risk one unconfirmed rejects with `confirmation_required`. */
export function applyChange(document: ConfigChange, confirm: boolean): Promise<ApplyResult> {
  return request<ApplyResult>('/admin/config/apply', { method: 'POST', body: JSON.stringify({ document, prune: false, confirm_high_risk: confirm }) });
}

/** The memory a local model would take with these load settings (any left out: its saved ones). */
export function estimateModel(id: string, settings: ModelOverride, signal?: AbortSignal): Promise<ModelEstimate> {
  return request<ModelEstimate>(`/admin/models/${encodeURIComponent(id)}/estimate`, { method: 'POST', body: JSON.stringify(settings), signal });
}
