import type { ModelRecord } from '#shared/api/openai.js';

/** A `/v1/models` entry as the companion lists a local chat model that is not loaded, with `extra` on top. */
export const modelRecord = (id: string, extra: Partial<ModelRecord> = {}): ModelRecord => ({
  id,
  object: 'model',
  created: 0,
  owned_by: 'local',
  source: 'local',
  loaded: false,
  capabilities: ['chat'],
  ...extra,
});
