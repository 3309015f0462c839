/**
 * OpenAI's reasoning efforts as thought budgets, both ways: a request's `reasoning_effort` becomes
 * the engine's budget (chat completions, Responses, Ollama's `think` levels), and a neutral
 * request's budget becomes the effort a provider's chat-completions endpoint is sent.
 */
import type { ReasoningEffort } from '#shared/api/openai.js';
import type { ReasoningControl } from '../inference/types.js';

type Budgeted = Exclude<ReasoningEffort, 'none' | 'high'>;

/** Each effort's share of the request's max tokens as the thought's budget (high: no budget). */
const SHARE: Record<Budgeted, number> = { minimal: 1 / 16, low: 1 / 4, medium: 1 / 2 };
/** The budget when the request sets no max tokens. */
const WITHOUT_MAX: Record<Budgeted, number> = { minimal: 256, low: 1024, medium: 4096 };
const BUDGETED: Budgeted[] = ['minimal', 'low', 'medium'];

/** The thought budget of an effort that has one. */
export function budgetOf(effort: Budgeted, maxTokens: number | undefined): number {
  return maxTokens === undefined ? WITHOUT_MAX[effort] : Math.max(1, Math.floor(maxTokens * SHARE[effort]));
}

/**
 * The effort whose budget covers a control's: the smallest of minimal, low and medium whose budget
 * is at least the control's, else high (no budget is high). A control that turns thinking off gives
 * none, so the provider's model keeps its own default: many provider models refuse an effort of
 * `none`, and a model that does not reason refuses any effort.
 */
export function effortOf(control: ReasoningControl | undefined, maxTokens: number | undefined): ReasoningEffort | undefined {
  if (!control?.enabled) return undefined;
  if (control.budgetTokens === undefined) return 'high';
  return BUDGETED.find((effort) => control.budgetTokens! <= budgetOf(effort, maxTokens)) ?? 'high';
}
