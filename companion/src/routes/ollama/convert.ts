import type { OllamaFormat, OllamaMessage, OllamaOptions, OllamaThink, OllamaTool } from '#shared/api/ollama.js';
import { HearthError } from '../../errors.js';
import type { HistoryItem, MediaPart, OutputFormat, ReasoningControl, RequestFields, Sampling, ToolSpec } from '../../inference/types.js';
import { imageFromBase64 } from '../../generation/image-input.js';
import { reasoningOf } from '../openai/reasoning.js';

/** Ollama's field names, for the generation's error messages. */
export const OLLAMA_FIELDS: RequestFields = {
  history: 'messages',
  toolParameters: (index) => `tools[${index}].function.parameters`,
  schema: 'format',
};

/** `options` as sampling settings. num_ctx is not among them: a loaded model's context is its load setting's. */
export function samplingOf(options: OllamaOptions | undefined): Sampling {
  return {
    temperature: options?.temperature,
    topP: options?.top_p,
    topK: options?.top_k,
    seed: options?.seed,
    presencePenalty: options?.presence_penalty,
    frequencyPenalty: options?.frequency_penalty,
  };
}

/** num_predict: a positive count, else (-1, -2, 0 or left out) as many as the context holds. */
export function maxTokensOf(options: OllamaOptions | undefined): number | undefined {
  const limit = options?.num_predict;
  return limit !== undefined && limit > 0 ? limit : undefined;
}

export function outputOf(format: OllamaFormat | '' | undefined): OutputFormat {
  if (format === undefined || format === '') return { type: 'text' };
  if (format === 'json') return { type: 'json' };
  return { type: 'json', schema: format };
}

/**
 * `think`: on or off, or an effort word, whose thought budget is the one OpenAI's reasoning_effort
 * of the same word gets (a share of num_predict; high: no budget).
 */
export function thinkingOf(think: OllamaThink | undefined, maxTokens: number | undefined): ReasoningControl | undefined {
  if (think === undefined) return undefined;
  if (typeof think === 'boolean') return { enabled: think };
  return reasoningOf(think, undefined, maxTokens);
}

export function toolsOf(tools: OllamaTool[] | undefined): ToolSpec[] {
  return (tools ?? []).map((tool) => ({ name: tool.function.name, description: tool.function.description, parameters: tool.function.parameters }));
}

/**
 * A message's `images` (base64, as Ollama takes them) as media at the start of its text, where
 * Ollama puts them; none gives undefined.
 */
export function imagesOf(images: string[] | undefined, param: string): MediaPart[] | undefined {
  if (!images || images.length === 0) return undefined;
  return images.map((image, index) => imageFromBase64(image, `${param}[${index}]`, 0));
}

/** Images only go with a user turn (a user message, or /api/generate's templated prompt) or a tool's result. */
export function refuseImages(images: string[] | undefined, param: string, where: string): void {
  if (images && images.length > 0)
    throw new HearthError(
      'invalid_request_error',
      `${param} is not taken ${where}: images go with a user message (or a tool's result). Send them on a user message.`,
      { param },
    );
}

/**
 * Ollama's messages as the neutral history. Ollama's tool calls carry no id (newer clients may send
 * one): each assistant call gets one, and a tool message answers the call it names by
 * `tool_call_id`, else the first call of that `tool_name` not answered yet, else the first call
 * not answered yet.
 */
export function historyOf(messages: OllamaMessage[]): HistoryItem[] {
  const unanswered: { id: string; name: string }[] = [];
  return messages.map((message, index): HistoryItem => {
    if (message.role !== 'user' && message.role !== 'tool') refuseImages(message.images, `messages[${index}].images`, `on a ${message.role} message`);
    switch (message.role) {
      case 'system':
        return { role: 'system', text: message.content };
      case 'user': {
        const media = imagesOf(message.images, `messages[${index}].images`);
        return { role: 'user', text: message.content, ...(media ? { media } : {}) };
      }
      case 'assistant': {
        const toolCalls = (message.tool_calls ?? []).map((call, position) => ({
          id: call.id ?? `call_${index}_${position}`,
          name: call.function.name,
          arguments: JSON.stringify(call.function.arguments ?? {}),
        }));
        unanswered.push(...toolCalls.map((call) => ({ id: call.id, name: call.name })));
        return { role: 'assistant', text: message.content, toolCalls, ...(message.thinking ? { reasoning: message.thinking } : {}) };
      }
      case 'tool': {
        const at = Math.max(
          0,
          unanswered.findIndex((call) => (message.tool_call_id ? call.id === message.tool_call_id : call.name === message.tool_name)),
        );
        const answered = unanswered.splice(at, 1)[0];
        // A tool's images go before its text, as a user message's do.
        const media = imagesOf(message.images, `messages[${index}].images`);
        return { role: 'tool', callId: message.tool_call_id ?? answered?.id ?? `call_${index}`, output: message.content, ...(media ? { media } : {}) };
      }
    }
  });
}

/** A tool call's arguments (JSON text) as Ollama's object; text that is not a JSON object gives {}. */
export function argumentsOf(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
