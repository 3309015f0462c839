import type { ReasoningEffort } from '#shared/api/openai.js';
import { budgetOf } from '../../generation/effort.js';
import type { ReasoningControl } from '../../inference/types.js';

/**
 * The reasoning control of an OpenAI request (chat completions' `reasoning_effort` or
 * `chat_template_kwargs.enable_thinking`, Responses' `reasoning.effort`): `none` (or
 * enable_thinking false) turns thinking off; minimal, low and medium give the thought 1/16, 1/4
 * and 1/2 of the max tokens (256, 1,024 and 4,096 tokens when none are set), then the answer
 * starts; `high` thinks without a budget. Neither given: the model's own default.
 */
export function reasoningOf(
  effort: ReasoningEffort | null | undefined,
  enableThinking: boolean | undefined,
  maxTokens: number | undefined,
): ReasoningControl | undefined {
  if (effort === 'none' || enableThinking === false) return { enabled: false };
  if (effort === undefined || effort === null) return enableThinking === true ? { enabled: true } : undefined;
  if (effort === 'high') return { enabled: true };
  return { enabled: true, budgetTokens: budgetOf(effort, maxTokens) };
}

/** The JSON schema of an effort value. */
export const effortSchema = { enum: ['none', 'minimal', 'low', 'medium', 'high', null] } as const;
