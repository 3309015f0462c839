/** One generation in process: node-llama-cpp's LlamaChat on a sequence the model's pool handed out. */
import { LlamaChat, type LlamaChatResponseChunk, type LlamaContextSequence, type Token } from 'node-llama-cpp';
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
  const chat = new LlamaChat({ contextSequence: sequence, chatWrapper: wrapper });
  const reasoning = { text: '', tokens: 0 };
  const outputBefore = sequence.tokenMeter.usedOutputTokens;
  try {
    const common = {
      maxTokens,
      ...samplingOptions(request),
      // The response segment's text only: visible text. The thought comes through onResponseChunk.
      onTextChunk: forced ? undefined : request.onText,
      onResponseChunk: (chunk: LlamaChatResponseChunk) => {
        if (chunk.type !== 'segment' || chunk.segmentType !== 'thought') return;
        reasoning.text += chunk.text;
        reasoning.tokens += chunk.tokens.length;
        if (chunk.text && thought) request.onReasoning?.(chunk.text);
      },
      // A thought budget (0: thinking off) closes the thought after that many tokens and the answer starts.
      budgets: thought && thoughtBudget !== undefined ? { thoughtTokens: thoughtBudget } : undefined,
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
      ...(thought ? { reasoning: reasoning.text, reasoningTokens: Math.min(reasoning.tokens, completionTokens) } : {}),
    };
  } finally {
    chat.dispose({ disposeSequence: false });
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
