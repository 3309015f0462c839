/** A generation's result as Anthropic's Message: content blocks, stop reason, usage. */
import type { GenerationResult, ToolCallRecord } from '../../inference/types.js';
import type { ContentBlock, Message, MessageUsage, StopReason, ToolUseBlock } from '#shared/api/anthropic.js';

/**
 * What a thinking block carries as its signature. Hearth signs nothing; a client that sends
 * thinking back (Claude Code does, with tools) keeps only blocks that have one, and Hearth reads
 * them back as the turn's reasoning whatever they carry.
 */
export const THINKING_SIGNATURE = 'hearth-unsigned';

/** A message before anything is generated: what message_start sends. */
export function messageShell(id: string, model: string): Message {
  return { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: emptyUsage() };
}

/** The whole reply at once: thinking, text, then each tool call. */
export function messageOf(id: string, model: string, result: GenerationResult): Message {
  const content: ContentBlock[] = [];
  if (result.reasoning) content.push({ type: 'thinking', thinking: result.reasoning, signature: THINKING_SIGNATURE });
  if (result.text) content.push({ type: 'text', text: result.text, citations: null });
  content.push(...result.toolCalls.map(toolUseOf));
  return { ...messageShell(id, model), content, ...stopOf(result), usage: usageOf(result) };
}

/** The result with the calls the request allows: all, or only the first with `disable_parallel_tool_use` (`oneCall`). */
export function allowedCalls(result: GenerationResult, oneCall: boolean): GenerationResult {
  return oneCall && result.toolCalls.length > 1 ? { ...result, toolCalls: result.toolCalls.slice(0, 1) } : result;
}

export function toolUseOf(call: ToolCallRecord): ToolUseBlock {
  return { type: 'tool_use', id: call.id, name: call.name, input: inputOf(call.arguments) };
}

/** A call's arguments as an object; arguments cut off by max_tokens are no object yet, and give {}. */
function inputOf(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Why the reply stopped. A cancelled one is read by no one (the client left, or the server said so first). */
export function stopOf(result: GenerationResult): { stop_reason: StopReason; stop_sequence: string | null } {
  if (result.finishReason === 'stop' && result.stopSequence !== undefined) return { stop_reason: 'stop_sequence', stop_sequence: result.stopSequence };
  const reason: StopReason = result.finishReason === 'tool_calls' ? 'tool_use' : result.finishReason === 'length' ? 'max_tokens' : 'end_turn';
  return { stop_reason: reason, stop_sequence: null };
}

/** Anthropic counts the prompt in three parts that add up: evaluated, written to the cache, read from it. */
export function usageOf(result: GenerationResult): MessageUsage {
  const cached = result.cachedTokens ?? 0;
  return {
    input_tokens: result.promptTokens - cached,
    output_tokens: result.completionTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
  };
}

function emptyUsage(): MessageUsage {
  return { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}
