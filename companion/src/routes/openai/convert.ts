import { HearthError } from '../../errors.js';
import type { ChatCompletionRequest, ChatMessage, ChatUserPart, TextPart } from '#shared/api/openai.js';
import type { HistoryItem, MediaPart, OutputFormat, ToolMode, ToolSpec } from '../../inference/types.js';
import { isMediaPart, mediaPart, type ContentPart } from './media-parts.js';

/** Text of a message's content: a string or text parts; other part types are refused by name. */
export function contentText(content: string | TextPart[] | null | undefined, param: string): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part, index) => {
      if (part.type !== 'text' && part.type !== 'input_text' && part.type !== 'output_text') {
        const where = isMediaPart(part as ContentPart)
          ? ' in this message: images and sounds go in user messages and tool results'
          : ': local models here take text, image_url, input_image and input_audio parts';
        throw new HearthError('invalid_request_error', `${param}[${index}].type "${part.type}" is not supported${where}.`, {
          param: `${param}[${index}].type`,
        });
      }
      return part.text;
    })
    .join('');
}

/** A user message (chat completions or Responses): its text, and its images and sounds (media-parts.ts) at their places in it. */
export function userMessage(content: string | ChatUserPart[], param: string): HistoryItem {
  const { text, media } = textWithMedia(content, param);
  return { role: 'user', text, ...(media ? { media } : {}) };
}

/**
 * A content that may hold media (a user message, a tool result): its text, and its images and
 * sounds at their places in it (none: `media` left out).
 */
export function textWithMedia(content: string | ChatUserPart[], param: string): { text: string; media?: MediaPart[] } {
  if (typeof content === 'string' || !content.some((part) => isMediaPart(part as ContentPart))) return { text: contentText(content as TextPart[], param) };
  let text = '';
  const media: MediaPart[] = [];
  (content as ContentPart[]).forEach((part, index) => {
    if (isMediaPart(part)) media.push(mediaPart(part, `${param}[${index}]`, text.length));
    else if (part.type === 'text' || part.type === 'input_text') text += part.text ?? '';
    else
      throw new HearthError(
        'invalid_request_error',
        `${param}[${index}].type "${part.type}" is not supported: local models here take text, image_url, input_image and input_audio parts.`,
        {
          param: `${param}[${index}].type`,
        },
      );
  });
  return { text, media };
}

export function messagesToHistory(messages: ChatMessage[]): HistoryItem[] {
  return messages.map((message, index): HistoryItem => {
    const param = `messages[${index}].content`;
    switch (message.role) {
      case 'system':
      case 'developer':
        return { role: 'system', text: contentText(message.content, param) };
      case 'user':
        return userMessage(message.content, param);
      case 'assistant':
        return {
          role: 'assistant',
          text: contentText(message.content, param),
          toolCalls: (message.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments })),
          ...(message.reasoning_content ? { reasoning: message.reasoning_content } : {}),
        };
      case 'tool':
        if (!message.tool_call_id)
          throw new HearthError('invalid_request_error', `messages[${index}].tool_call_id is required for a tool message.`, {
            param: `messages[${index}].tool_call_id`,
          });
        // A tool result may hold images too (as vLLM and llama-server take them; OpenAI's own API takes text parts only).
        return toolResult(message.tool_call_id, textWithMedia(message.content, param));
    }
  });
}

/** A tool item from a result's text and media. */
export function toolResult(callId: string, { text, media }: { text: string; media?: MediaPart[] }): HistoryItem {
  return { role: 'tool', callId, output: text, ...(media ? { media } : {}) };
}

export function toolsOf(request: Pick<ChatCompletionRequest, 'tools'>): ToolSpec[] {
  return (request.tools ?? []).map((tool) => ({ name: tool.function.name, description: tool.function.description, parameters: tool.function.parameters }));
}

/** The tool mode of a tool_choice left out or given as a word, the same in Chat Completions and Responses. */
export function wordToolMode(choice: 'auto' | 'none' | 'required' | undefined, tools: ToolSpec[]): ToolMode {
  if (choice === undefined) return { type: tools.length > 0 ? 'auto' : 'none' };
  if (choice === 'required' && tools.length === 0)
    throw new HearthError('invalid_request_error', 'tool_choice is "required" but tools is empty.', { param: 'tool_choice' });
  return { type: choice };
}

export function toolModeOf(choice: ChatCompletionRequest['tool_choice'], tools: ToolSpec[]): ToolMode {
  if (choice === undefined || typeof choice === 'string') return wordToolMode(choice, tools);
  return namedToolMode(choice.function.name, tools);
}

/** A tool_choice that names a function, the same in Chat Completions and Responses: it must be one of the tools. */
export function namedToolMode(name: string, tools: ToolSpec[]): ToolMode {
  if (!tools.some((tool) => tool.name === name)) {
    throw new HearthError('invalid_request_error', `tool_choice names "${name}", which is not in tools.`, { param: 'tool_choice' });
  }
  return { type: 'named', name };
}

export function outputOf(format: ChatCompletionRequest['response_format']): OutputFormat {
  if (!format || format.type === 'text') return { type: 'text' };
  if (format.type === 'json_object') return { type: 'json' };
  return { type: 'json', schema: format.json_schema.schema };
}

export function stopList(stop: string | string[] | null | undefined): string[] {
  if (stop === null || stop === undefined) return [];
  return typeof stop === 'string' ? [stop] : stop;
}
