/** One generation in process: node-llama-cpp's LlamaChat on a sequence the model's pool handed out. */
import type { LlamaChatResponseChunk, LlamaChatResponseSegmentChunk, LlamaContextSequence, Token } from 'node-llama-cpp';
import { binding } from '../binding.js';
import { newId } from '../../ids.js';
import { forcedCall, planGeneration, type GenerationPlan, type ModelRuntime } from '../generation-plan.js';
import { resolveSampling, type ResolvedSampling } from '../sampling.js';
import type { GenerationRequest, GenerationResult, ToolCallRecord } from '../types.js';

/**
 * Runs one generation on a sequence the caller owns (the in-process engine), from the request's
 * plan when the caller made it already (to choose the sequence by its prompt).
 */
export async function generate(
  runtime: ModelRuntime,
  sequence: LlamaContextSequence,
  request: GenerationRequest,
  plan?: GenerationPlan,
): Promise<GenerationResult> {
  const { history, wrapper, thought, thoughtBudget, forced, offered, promptTokens, maxTokens, grammar } = plan ?? (await planGeneration(runtime, request));
  const chat = new (binding().LlamaChat)({ contextSequence: sequence, chatWrapper: wrapper });
  const outputBefore = sequence.tokenMeter.usedOutputTokens;
  const reasoning = { text: '' };
  const thoughtMeter = new ThoughtMeter(() => sequence.tokenMeter.usedOutputTokens - outputBefore);
  try {
    const common = {
      maxTokens,
      ...samplingOptions(request),
      // The response segment's text only: visible text. The thought comes through onResponseChunk.
      onTextChunk: forced ? undefined : request.onText,
      onResponseChunk: (chunk: LlamaChatResponseChunk) => {
        if (chunk.type !== 'segment' || chunk.segmentType !== 'thought') return;
        thoughtMeter.chunk(chunk);
        reasoning.text += chunk.text;
        if (chunk.text && thought) request.onReasoning?.(chunk.text);
      },
      // A thought budget (0: thinking off) closes the thought after that many generated tokens and the answer starts.
      budgets: thought && thoughtBudget !== undefined ? thoughtMeter.budgets(thoughtBudget) : undefined,
    } as const;
    const response = offered
      ? await chat.generateResponse(history, { ...common, functions: offered, documentFunctionParams: true, maxParallelFunctionCalls: undefined })
      : await chat.generateResponse(history, { ...common, grammar });
    const completionTokens = sequence.tokenMeter.usedOutputTokens - outputBefore;
    const stop = response.metadata.stopReason;
    const finishReason = stop === 'abort' ? 'cancelled' : stop === 'maxTokens' ? 'length' : 'stop';

    if (forced) return forcedCall(response.response, request, finishReason, promptTokens.length, completionTokens);
    const calls: ToolCallRecord[] = (response.functionCalls ?? []).map((call) => ({
      id: newId('call_'),
      name: call.functionName,
      arguments: JSON.stringify(call.params ?? {}),
    }));
    const stopSequence = response.metadata.stopReason === 'customStopTrigger' ? stopEntry(response.metadata.customStopTrigger, request.stop) : undefined;
    return {
      text: response.response,
      toolCalls: calls,
      finishReason: calls.length > 0 ? 'tool_calls' : finishReason,
      promptTokens: promptTokens.length,
      completionTokens,
      ...(stopSequence !== undefined && calls.length === 0 ? { stopSequence } : {}),
      ...(thought ? { reasoning: reasoning.text, reasoningTokens: Math.min(thoughtMeter.tokens, completionTokens) } : {}),
    };
  } finally {
    chat.dispose({ disposeSequence: false });
  }
}

/**
 * The tokens the model generated inside thoughts, read from the sequence's output meter between a
 * thought's open and close, and the thought budget node-llama-cpp checks after every generated
 * token, from that count. node-llama-cpp's own count is of the tokens its segment handler
 * released into the thought, which is not what was generated: the text left after the start text
 * it ignores (a leading space) is tokenised again (one generated " letter" can come back as six
 * one-letter tokens), and tokens it holds back (part of a character, the start of a possible
 * close or stop mark) join the count only later, all at once, past the budget.
 */
export class ThoughtMeter {
  private used = 0;
  private openedAt: number | undefined;

  /** `generated`: the tokens this generation has generated so far. */
  constructor(private readonly generated: () => number) {}

  /** A thought chunk of onResponseChunk: where a thought opens and closes. */
  chunk(chunk: LlamaChatResponseSegmentChunk): void {
    if (chunk.segmentStartTime && this.openedAt === undefined) this.openedAt = this.generated();
    if (chunk.segmentEndTime && this.openedAt !== undefined) {
      this.used += this.generated() - this.openedAt;
      this.openedAt = undefined;
    }
  }

  /** Tokens generated inside thoughts so far. */
  get tokens(): number {
    return this.used + (this.openedAt === undefined ? 0 : this.generated() - this.openedAt);
  }

  /**
   * LlamaChat's budgets for a thought budget of `budget` tokens: node-llama-cpp reads the value
   * after every token and closes an open thought once its own count reaches it, so this reads no
   * limit (Infinity) until the generated count reaches the budget, and 0 from then on.
   */
  budgets(budget: number): { readonly thoughtTokens: number } {
    const used = () => this.tokens;
    return {
      get thoughtTokens() {
        return used() >= budget ? 0 : Infinity;
      },
    };
  }
}

/** The request's stop text that node-llama-cpp's trigger (its text parts) is. */
export function stopEntry(trigger: readonly (string | Token)[], stop: string[]): string | undefined {
  const text = trigger.filter((part): part is string => typeof part === 'string').join('');
  return stop.find((entry) => entry === text);
}

/** What node-llama-cpp's generations (LlamaChat, LlamaCompletion) take of a request: its sampling, stop texts and cancel. */
export function samplingOptions(request: GenerationRequest) {
  const sampling = resolveSampling(request.sampling);
  return {
    signal: request.signal,
    stopOnAbortSignal: true,
    temperature: sampling.temperature,
    topP: sampling.topP,
    topK: sampling.topK,
    minP: sampling.minP,
    seed: sampling.seed,
    repeatPenalty: repeatPenalty(sampling),
    customStopTriggers: request.stop.length > 0 ? request.stop : undefined,
  } as const;
}

/** node-llama-cpp's repeat penalty: off unless a presence or frequency penalty is set. */
function repeatPenalty(sampling: ResolvedSampling) {
  const { presencePenalty, frequencyPenalty } = sampling;
  if (!presencePenalty && !frequencyPenalty) return false as const;
  return { penalty: sampling.repeatPenalty, presencePenalty, frequencyPenalty };
}
