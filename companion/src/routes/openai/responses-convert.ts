import { HearthError } from '../../errors.js';
import { newId } from '../../ids.js';
import { namedToolMode, textWithMedia, toolResult, userMessage, wordToolMode } from './convert.js';
import type { GenerationResult, HistoryItem, OutputFormat, ToolMode, ToolSpec } from '../../inference/types.js';
import type {
  InputItem,
  InputTextPart,
  OutputItem,
  OutputTextPart,
  ResponseCreateRequest,
  ResponseFunctionTool,
  ResponseObject,
  TextFormat,
} from '#shared/api/responses.js';

/** The request's input as items: a plain string is one user message. */
export function inputItemsOf(input: ResponseCreateRequest['input']): InputItem[] {
  return typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input;
}

/**
 * The generation history: instructions first (they apply to this response only), then the
 * stored conversation of previous_response_id, then this request's input.
 */
export function historyOf(instructions: string | null | undefined, previous: InputItem[], input: InputItem[]): HistoryItem[] {
  const conversation = [...itemsToHistory(previous, 'previous_response_id'), ...itemsToHistory(input, 'input')];
  if (!conversation.some((item) => item.role === 'user' || item.role === 'assistant')) {
    throw new HearthError(
      'invalid_request_error',
      'input must contain at least one user or assistant message, or previous_response_id must name a stored response.',
      { param: 'input' },
    );
  }
  return [...(instructions ? [{ role: 'system' as const, text: instructions }] : []), ...conversation];
}

/** Items to history; function calls join the assistant turn they follow, as chat templates expect. */
export function itemsToHistory(items: InputItem[], param: string): HistoryItem[] {
  const history: HistoryItem[] = [];
  items.forEach((item, index) => {
    const at = `${param}[${index}]`;
    switch (item.type ?? 'message') {
      case 'message': {
        const message = item as Extract<InputItem, { role: string }>;
        // A user message may carry images and sounds (input_image, input_audio) among its text.
        if (message.role === 'user') {
          history.push(userMessage(message.content as Parameters<typeof userMessage>[0], `${at}.content`));
          break;
        }
        const text = partsText(message.content as string | (InputTextPart | OutputTextPart)[], `${at}.content`);
        if (message.role === 'assistant') history.push({ role: 'assistant', text, toolCalls: [] });
        else history.push({ role: 'system', text });
        break;
      }
      case 'function_call': {
        const call = item as Extract<InputItem, { type: 'function_call' }>;
        const record = { id: call.call_id, name: call.name, arguments: call.arguments };
        const last = history.at(-1);
        if (last?.role === 'assistant') last.toolCalls.push(record);
        else history.push({ role: 'assistant', text: '', toolCalls: [record] });
        break;
      }
      case 'function_call_output': {
        const output = item as Extract<InputItem, { type: 'function_call_output' }>;
        // Its output may hold input_image parts among its text, as OpenAI's does.
        history.push(toolResult(output.call_id, textWithMedia(output.output as Parameters<typeof textWithMedia>[0], `${at}.output`)));
        break;
      }
      // An earlier response's thought: accepted and dropped (chat formats leave earlier thoughts out of the prompt).
      case 'reasoning':
        break;
      default:
        throw new HearthError(
          'invalid_request_error',
          `${at}.type "${item.type}" is not supported by local models: use message, function_call, function_call_output or reasoning items.`,
          { param: `${at}.type` },
        );
    }
  });
  return history;
}

function partsText(content: string | (InputTextPart | OutputTextPart)[], param: string): string {
  if (typeof content === 'string') return content;
  return content
    .map((part, index) => {
      if (part.type !== 'input_text' && part.type !== 'output_text') {
        throw new HearthError(
          'invalid_request_error',
          `${param}[${index}].type "${(part as { type: string }).type}" is not supported here: assistant and system messages take text parts (images go in user messages and function outputs).`,
          { param: `${param}[${index}].type` },
        );
      }
      return part.text;
    })
    .join('');
}

export function toolsOf(tools: ResponseFunctionTool[] | undefined): ToolSpec[] {
  return (tools ?? []).map((tool, index) => {
    if (tool.type !== 'function') {
      throw new HearthError(
        'invalid_request_error',
        `tools[${index}].type "${tool.type as string}" is not supported by local models: only function tools are.`,
        { param: `tools[${index}].type` },
      );
    }
    return { name: tool.name, description: tool.description ?? undefined, parameters: tool.parameters ?? undefined };
  });
}

export function toolModeOf(choice: ResponseCreateRequest['tool_choice'], tools: ToolSpec[]): ToolMode {
  if (choice === undefined || typeof choice === 'string') return wordToolMode(choice, tools);
  if (choice.type !== 'function') {
    throw new HearthError(
      'invalid_request_error',
      `tool_choice.type "${choice.type as string}" is not supported by local models: use "auto", "none", "required" or a function.`,
      { param: 'tool_choice.type' },
    );
  }
  return namedToolMode(choice.name, tools);
}

export function outputFormatOf(format: TextFormat | undefined): OutputFormat {
  if (!format || format.type === 'text') return { type: 'text' };
  if (format.type === 'json_object') return { type: 'json' };
  return { type: 'json', schema: format.schema };
}

/** A Response object in progress: no output yet. */
export function responseShell(id: string, createdAt: number, model: string, body: ResponseCreateRequest): ResponseObject {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    model,
    output: [],
    usage: null,
    incomplete_details: null,
    error: null,
    instructions: body.instructions ?? null,
    tools: (body.tools ?? []).map((tool) => ({
      type: tool.type,
      name: tool.name,
      description: tool.description ?? null,
      parameters: tool.parameters ?? null,
      strict: tool.strict ?? true,
    })),
    tool_choice: body.tool_choice ?? 'auto',
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    text: { format: body.text?.format ?? { type: 'text' } },
    temperature: body.temperature ?? null,
    top_p: body.top_p ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    store: body.store !== false,
    truncation: 'disabled',
    ...(body.user === undefined ? {} : { user: body.user }),
  };
}

/** The reasoning item of a result whose model thought, before its message (none when it did not). */
export function reasoningItemOf(result: GenerationResult, reasoningId: string): OutputItem[] {
  if (!result.reasoning) return [];
  return [{ type: 'reasoning', id: reasoningId, summary: [], content: [{ type: 'reasoning_text', text: result.reasoning }], status: 'completed' }];
}

/** The output items of a result: its thought, a message when there is text (or nothing else), then each function call. */
export function outputItemsOf(result: GenerationResult, messageId: string, reasoningId = newId('rs_')): OutputItem[] {
  const incomplete = result.finishReason === 'length';
  const message: OutputItem[] =
    result.text || result.toolCalls.length === 0
      ? [
          {
            type: 'message',
            id: messageId,
            status: incomplete ? 'incomplete' : 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: result.text, annotations: [] }],
          },
        ]
      : [];
  const calls = result.toolCalls.map((call): OutputItem => ({
    type: 'function_call',
    id: newId('fc_'),
    call_id: call.id,
    name: call.name,
    arguments: call.arguments,
    // A call cut off by max_output_tokens keeps the arguments produced so far.
    status: incomplete ? 'incomplete' : 'completed',
  }));
  return [...reasoningItemOf(result, reasoningId), ...message, ...calls];
}

/** The shell completed with the result: status, output and usage. */
export function finishedResponse(shell: ResponseObject, result: GenerationResult, output: OutputItem[]): ResponseObject {
  const incomplete = result.finishReason === 'length';
  return {
    ...shell,
    status: incomplete ? 'incomplete' : 'completed',
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    output,
    usage: {
      input_tokens: result.promptTokens,
      output_tokens: result.completionTokens,
      total_tokens: result.promptTokens + result.completionTokens,
      input_tokens_details: { cached_tokens: result.cachedTokens ?? 0, cache_write_tokens: 0 },
      output_tokens_details: { reasoning_tokens: result.reasoningTokens ?? 0 },
    },
  };
}
