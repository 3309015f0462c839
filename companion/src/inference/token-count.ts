/** A request's prompt, measured in tokens exactly as it would run (Anthropic's count_tokens, Ollama's counts). */
import { planGeneration, type ModelRuntime } from './generation-plan.js';
import { planRaw } from './raw-prompt.js';
import type { ModelRequest } from './text-pipeline.js';

/**
 * The prompt tokens of `request` on a model: raw, or rendered with its chat template, tools
 * included. Counted against no context limit: a prompt too long to run still has its count.
 */
export async function countPromptTokens(runtime: ModelRuntime, request: ModelRequest): Promise<number> {
  if (request.raw) return planRaw(runtime.model, Infinity, request).promptTokens.length;
  return (await planGeneration({ ...runtime, contextSize: Infinity }, request)).promptTokens.length;
}
