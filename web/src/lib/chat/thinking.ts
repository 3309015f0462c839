/** Reasoning models in the chat: which models think, and what a conversation's Thinking switch asks of them. */
import type { ChatSettings } from '$lib/storage/conversations';
import type { ModelRecord, ReasoningEffort } from '#shared/api/openai.js';
import { parseModelKey } from './backends';

/** Whether the model behind a chat's model key thinks before it answers (a companion model with the `reasoning` capability). */
export function thinks(records: readonly ModelRecord[], key: string): boolean {
  const ref = parseModelKey(key);
  if (ref?.runtime !== 'companion') return false;
  return records.find((record) => record.id === ref.id)?.capabilities?.includes('reasoning') ?? false;
}

/**
 * The `reasoning_effort` a reasoning model is asked for: `none` with the switch off; with a reply
 * limit (max tokens) `medium`, which gives the thought at most half of it, so a long thought still
 * leaves room for an answer; otherwise nothing (the model thinks as long as it needs).
 */
export function effortFor(settings: ChatSettings): ReasoningEffort | undefined {
  if (!settings.thinking) return 'none';
  return settings.maxTokens ? 'medium' : undefined;
}
