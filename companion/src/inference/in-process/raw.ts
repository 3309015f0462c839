/** One raw generation in process (completions, fill-in-the-middle): node-llama-cpp's LlamaCompletion on the prompt's tokens. */
import type { LlamaContextSequence, LlamaModel, Token } from 'node-llama-cpp';
import { binding } from '../binding.js';
import type { RawPlan } from '../raw-prompt.js';
import type { GenerationRequest, GenerationResult } from '../types.js';
import { samplingOptions, stopEntry } from './generate.js';

/** Generates from a raw plan on a sequence the caller owns; the sequence keeps what it matches of an earlier prompt. */
export async function generateRaw(model: LlamaModel, sequence: LlamaContextSequence, request: GenerationRequest, plan: RawPlan): Promise<GenerationResult> {
  const completion = new (binding().LlamaCompletion)({ contextSequence: sequence });
  const outputBefore = sequence.tokenMeter.usedOutputTokens;
  try {
    const { metadata, response } = await completion.generateCompletionWithMeta(withoutOwnBos(model, plan.promptTokens), {
      maxTokens: plan.maxTokens,
      ...samplingOptions(request),
      onTextChunk: request.onText,
      // The plan measured the prompt against the context: nothing is cut from it or shifted out.
      disableContextShift: true,
      contextShiftSize: 1,
    });
    const stop = metadata.stopReason;
    const stopSequence = metadata.stopReason === 'customStopTrigger' ? stopEntry(metadata.customStopTrigger, request.stop) : undefined;
    return {
      text: response,
      toolCalls: [],
      finishReason: stop === 'abort' ? 'cancelled' : stop === 'maxTokens' ? 'length' : 'stop',
      promptTokens: plan.promptTokens.length,
      completionTokens: sequence.tokenMeter.usedOutputTokens - outputBefore,
      ...(stopSequence !== undefined ? { stopSequence } : {}),
    };
  } finally {
    completion.dispose({ disposeSequence: false });
  }
}

/** LlamaCompletion puts the model's BOS in front of its input itself: the plan's own goes. */
function withoutOwnBos(model: LlamaModel, tokens: Token[]): Token[] {
  const bos = model.tokens.bos;
  return model.tokens.shouldPrependBosToken && bos !== null && tokens[0] === bos ? tokens.slice(1) : tokens;
}
