/**
 * A Messages request as the neutral generation request (inference/types.ts): the system blocks,
 * the messages' blocks as history, the tools, tool_choice and thinking. Whatever Hearth cannot
 * take is refused here with the field that holds it.
 */
import { HearthError } from '../../errors.js';
import type { GenerationRequest, HistoryItem, MediaPart, ReasoningControl, RequestFields, ToolCallRecord, ToolMode, ToolSpec } from '../../inference/types.js';
import { namedToolMode } from '../openai/convert.js';
import { imageFromBase64, imageFromUrl } from '../../generation/image-input.js';
import type { ContentBlockParam, CountTokensRequest, ImageBlockParam, MessageCreateRequest, ToolResultBlockParam } from '#shared/api/anthropic.js';
import { withoutRequestStamp } from './claude-code.js';

/** The Messages API's names for the fields an engine's error names. */
export const MESSAGES_FIELDS: RequestFields = {
  history: 'messages',
  toolParameters: (index) => `tools[${index}].input_schema`,
  schema: 'output_format.schema',
};

/** What a generation needs of a conversation (count_tokens reads the same), without the signal and the callbacks. */
export type Conversation = Omit<GenerationRequest, 'signal'>;

/** The conversation of a count_tokens request: what the prompt will be, with nothing to generate. */
export function conversationOf(body: CountTokensRequest): Conversation {
  const tools = toolsOf(body.tools);
  return {
    model: body.model,
    history: historyOf(body),
    sampling: {},
    stop: [],
    tools,
    toolMode: toolModeOf(body.tool_choice, tools),
    output: { type: 'text' },
    ...(body.thinking ? { reasoning: reasoningOf(body.thinking) } : {}),
    fields: MESSAGES_FIELDS,
  };
}

/** A Messages request to generate: its conversation, its budget, sampling and stop sequences. */
export function generationOf(body: MessageCreateRequest): Conversation {
  return {
    ...conversationOf(body),
    maxTokens: body.max_tokens,
    sampling: { temperature: body.temperature, topP: body.top_p, topK: body.top_k },
    stop: body.stop_sequences ?? [],
  };
}

function invalid(message: string, param: string): HearthError {
  return new HearthError('invalid_request_error', message, { param });
}

/**
 * The system prompt (its text blocks joined; Claude Code's per-request stamp left out) and the
 * messages, block by block. A tool_result must answer a tool_use of an earlier assistant message.
 */
export function historyOf(body: Pick<CountTokensRequest, 'system' | 'messages'>): HistoryItem[] {
  const items: HistoryItem[] = [];
  const system = systemText(body.system);
  if (system) items.push({ role: 'system', text: system });
  const calls = new Set<string>();
  body.messages.forEach((message, index) => {
    const at = `messages[${index}].content`;
    if (typeof message.content === 'string') {
      items.push(message.role === 'assistant' ? { role: 'assistant', text: message.content, toolCalls: [] } : { role: message.role, text: message.content });
      return;
    }
    if (message.role === 'system') items.push({ role: 'system', text: systemBlocksText(message.content, at) });
    else if (message.role === 'assistant') {
      const item = assistantOf(message.content, at);
      for (const call of item.toolCalls) calls.add(call.id);
      items.push(item);
    } else items.push(...userItemsOf(message.content, at, calls));
  });
  return items;
}

function systemText(system: CountTokensRequest['system']): string {
  if (system === undefined) return '';
  const blocks = typeof system === 'string' ? [system] : system.map((block) => block.text);
  return blocks
    .map(withoutRequestStamp)
    .filter((text) => text.trim() !== '')
    .join('\n\n');
}

/** A system message in the conversation: its text blocks, one after the other. */
function systemBlocksText(blocks: ContentBlockParam[], at: string): string {
  return blocks
    .map((block, index) => {
      if (block.type === 'text') return block.text;
      throw refusedBlock(block, `${at}[${index}]`, 'a system message takes text blocks');
    })
    .join('\n');
}

function assistantOf(blocks: ContentBlockParam[], at: string): Extract<HistoryItem, { role: 'assistant' }> {
  let text = '';
  const thoughts: string[] = [];
  const toolCalls: ToolCallRecord[] = [];
  blocks.forEach((block, index) => {
    const param = `${at}[${index}]`;
    switch (block.type) {
      case 'text':
        text += block.text;
        break;
      case 'tool_use':
        toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input) });
        break;
      case 'thinking':
        thoughts.push(block.thinking);
        break;
      // Another system's encrypted thought: nothing a local model can read.
      case 'redacted_thinking':
        break;
      default:
        throw refusedBlock(block, param, 'an assistant message takes text, tool_use, thinking and redacted_thinking blocks');
    }
  });
  return { role: 'assistant', text, toolCalls, ...(thoughts.length > 0 ? { reasoning: thoughts.join('\n') } : {}) };
}

/**
 * A user message's blocks in order: each tool_result a tool item, the text and images between
 * them one user item (each image at its place in the text).
 */
function userItemsOf(blocks: ContentBlockParam[], at: string, calls: ReadonlySet<string>): HistoryItem[] {
  const items: HistoryItem[] = [];
  let texts: string[] = [];
  let media: MediaPart[] = [];
  const flush = () => {
    if (texts.length > 0 || media.length > 0) items.push({ role: 'user', text: texts.join('\n'), ...(media.length > 0 ? { media } : {}) });
    texts = [];
    media = [];
  };
  blocks.forEach((block, index) => {
    const param = `${at}[${index}]`;
    if (block.type === 'text') texts.push(block.text);
    else if (block.type === 'image') media.push(imageOf(block, param, texts.join('\n').length));
    else if (block.type === 'tool_result') {
      if (!calls.has(block.tool_use_id))
        throw invalid(
          `${param}.tool_use_id "${block.tool_use_id}" answers no tool_use block of an earlier assistant message. Send the assistant message with that tool_use before its result.`,
          `${param}.tool_use_id`,
        );
      flush();
      items.push({ role: 'tool', callId: block.tool_use_id, ...resultOf(block, param) });
    } else throw refusedBlock(block, param, 'a user message takes text, image and tool_result blocks');
  });
  flush();
  if (items.length === 0) items.push({ role: 'user', text: '' });
  return items;
}

/** An image block: base64 bytes, or a URL source (a data URL; remote ones are refused by imageFromUrl). */
function imageOf(block: ImageBlockParam, param: string, offset: number): MediaPart {
  const source = block.source as { type: string; data?: unknown; url?: unknown; media_type?: string };
  if (source.type === 'base64') return imageFromBase64(source.data, `${param}.source.data`, offset, source.media_type);
  if (source.type === 'url') return imageFromUrl(source.url, `${param}.source.url`, offset);
  throw invalid(`${param}.source.type "${source.type}" is not supported: send base64 (with media_type and data) or url.`, `${param}.source.type`);
}

/**
 * A tool result's text, and its images at their places in it (as a user message's); an error
 * result says so, since a chat format has no field for it.
 */
function resultOf(block: ToolResultBlockParam, at: string): { output: string; media?: MediaPart[] } {
  const content = block.content ?? '';
  const prefix = block.is_error ? 'Error: ' : '';
  if (typeof content === 'string') return { output: prefix + content };
  const texts: string[] = [];
  const media: MediaPart[] = [];
  content.forEach((part, index) => {
    const param = `${at}.content[${index}]`;
    if (part.type === 'text') texts.push(part.text);
    else if (part.type === 'image') media.push(imageOf(part, param, prefix.length + texts.join('\n').length));
    else throw refusedBlock(part, param, 'a tool_result takes text and image blocks');
  });
  return { output: prefix + texts.join('\n'), ...(media.length > 0 ? { media } : {}) };
}

function refusedBlock(block: { type: string }, param: string, allowed: string): HearthError {
  if (block.type === 'image')
    return invalid(
      `${param} is an image, which goes in a user message's blocks or a tool_result's content here (not in this place). Send it there, or describe it in text.`,
      `${param}.type`,
    );
  return invalid(`${param}.type "${block.type}" is not supported here: ${allowed}.`, `${param}.type`);
}

/** The client's tools; a server tool (web search, code execution, ...) is Anthropic's to run, and refused. */
export function toolsOf(tools: CountTokensRequest['tools']): ToolSpec[] {
  return (tools ?? []).map((tool, index) => {
    if (tool.type !== undefined && tool.type !== 'custom')
      throw invalid(
        `tools[${index}] is a server tool ("${tool.type}"), which Anthropic runs and Hearth does not. Give only tools the client runs, each with name and input_schema.`,
        `tools[${index}].type`,
      );
    if (tool.input_schema === undefined) throw invalid(`tools[${index}].input_schema is required.`, `tools[${index}].input_schema`);
    return { name: tool.name, description: tool.description, parameters: tool.input_schema };
  });
}

/** auto (the default with tools), any (some tool), none, or one tool by name, which the grammar then forces. */
export function toolModeOf(choice: CountTokensRequest['tool_choice'], tools: ToolSpec[]): ToolMode {
  switch (choice?.type) {
    case undefined:
    case 'auto':
      return { type: tools.length > 0 ? 'auto' : 'none' };
    case 'none':
      return { type: 'none' };
    case 'any':
      if (tools.length === 0) throw invalid('tool_choice is "any" but tools is empty.', 'tool_choice');
      return { type: 'required' };
    case 'tool':
      return namedToolMode(choice.name, tools);
  }
}

/** thinking: enabled with a budget, adaptive (the model's own length), or disabled. */
export function reasoningOf(thinking: NonNullable<CountTokensRequest['thinking']>): ReasoningControl {
  if (thinking.type === 'disabled') return { enabled: false };
  return thinking.type === 'enabled' ? { enabled: true, budgetTokens: thinking.budget_tokens } : { enabled: true };
}
