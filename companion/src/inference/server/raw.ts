/**
 * One raw generation on llama-server (completions, fill-in-the-middle): the plan's tokens (rendered
 * here, as in process) go to /completion as they are, with `cache_prompt`; no chat format, no
 * grammar, nothing held back from the client.
 */
import type { RawPlan } from '../raw-prompt.js';
import { resolveSampling } from '../sampling.js';
import type { GenerationRequest, GenerationResult } from '../types.js';
import type { ServerClient } from './client.js';
import { COMPLETION_FIELDS, engineFailure, samplingFields, type CompletionEvent, type PromptCounters } from './generate.js';

export async function generateRawOnServer(
  client: ServerClient,
  request: GenerationRequest,
  plan: RawPlan,
  counters?: (counts: PromptCounters) => void,
): Promise<GenerationResult> {
  const body = {
    prompt: plan.promptTokens,
    n_predict: plan.maxTokens,
    cache_prompt: true,
    stream: true,
    ...samplingFields(resolveSampling(request.sampling)),
    stop: request.stop,
    response_fields: COMPLETION_FIELDS,
  };
  const output = { text: '', tokens: 0, stop: 'none' as CompletionEvent['stop_type'], word: '', cached: 0 };
  try {
    for await (const event of client.events<CompletionEvent>('/completion', body, request.signal)) {
      if (event.content) {
        output.text += event.content;
        request.onText?.(event.content);
      }
      if (event.tokens_predicted !== undefined) output.tokens = event.tokens_predicted;
      if (event.stop) {
        output.stop = event.stop_type;
        output.word = event.stopping_word ?? '';
        output.cached = event['timings/cache_n'] ?? 0;
        counters?.({
          evaluated: event['timings/prompt_n'] ?? 0,
          reused: event['timings/cache_n'] ?? 0,
          drafted: event['timings/draft_n'] ?? 0,
          accepted: event['timings/draft_n_accepted'] ?? 0,
        });
      }
    }
  } catch (error) {
    if (!request.signal.aborted) throw engineFailure(error);
  }
  const finishReason = request.signal.aborted ? 'cancelled' : output.stop === 'limit' ? 'length' : 'stop';
  const stopped = finishReason === 'stop' && output.stop === 'word' && request.stop.includes(output.word) ? { stopSequence: output.word } : {};
  return {
    text: output.text,
    toolCalls: [],
    finishReason,
    promptTokens: plan.promptTokens.length,
    completionTokens: output.tokens,
    ...(output.cached > 0 ? { cachedTokens: output.cached } : {}),
    ...stopped,
  };
}
