import { HearthError } from '../errors.js';
import { newId } from '../ids.js';
import type { HistoryItem, MediaPart, ToolCallRecord, ToolSpec } from '../inference/types.js';
import { isObject, parseJson } from '../json.js';
import { LineTooLong } from '../line-buffer.js';
import { redact } from '../redaction.js';
import { readEvents } from '../sse-reader.js';
import { readAnswerJson } from './read-body.js';

/**
 * Hearth as a chat-completions client of a provider, with the provider's own tool calling
 * (OpenAI's documented wire format): history and tools out, one assistant turn back, streamed.
 */

export interface ChatTurn {
  text: string;
  toolCalls: ToolCallRecord[];
  promptTokens: number;
  completionTokens: number;
  finishReason: string | null;
  /** The provider's streamed thought (`reasoning_content`, or `reasoning` as vLLM and OpenRouter name it). */
  reasoning: string;
}

/** Protocol-neutral history as chat-completions messages. */
export function chatMessages(history: HistoryItem[]): Record<string, unknown>[] {
  return history.map((item) => {
    switch (item.role) {
      case 'system':
        return { role: item.role, content: item.text };
      case 'user':
        return { role: item.role, content: item.media?.length ? mediaParts(item.text, item.media) : item.text };
      case 'assistant':
        return {
          role: 'assistant',
          content: item.text || (item.toolCalls.length > 0 ? null : ''),
          ...(item.toolCalls.length > 0
            ? { tool_calls: item.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) }
            : {}),
        };
      case 'tool':
        // A tool result's images go as the client sent them, as parts (vLLM and llama-server take them; a provider that does not says so).
        return { role: 'tool', tool_call_id: item.callId, content: item.media?.length ? mediaParts(item.output, item.media) : item.output };
    }
  });
}

/** What an image's bytes are, for a data URL: its own type when the request said, else by its first bytes. */
function imageType(part: MediaPart): string {
  if (part.mime !== 'image/*') return part.mime;
  const head = part.data.subarray(0, 12);
  if (head[0] === 0x89 && head.subarray(1, 4).toString('latin1') === 'PNG') return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8) return 'image/jpeg';
  if (head.subarray(0, 4).toString('latin1') === 'GIF8') return 'image/gif';
  if (head.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return 'application/octet-stream';
}

/**
 * A user message (or a tool result) with media as chat-completions parts, each image or sound at
 * its place in the text: a provider gets them as they came (a remote image as its URL; the
 * provider fetches it).
 */
function mediaParts(text: string, media: MediaPart[]): Record<string, unknown>[] {
  const parts: Record<string, unknown>[] = [];
  let at = 0;
  const say = (until: number) => {
    if (until > at) parts.push({ type: 'text', text: text.slice(at, until) });
    at = Math.max(at, until);
  };
  for (const part of [...media].sort((a, b) => a.offset - b.offset)) {
    say(Math.min(part.offset, text.length));
    if (part.kind === 'audio')
      parts.push({ type: 'input_audio', input_audio: { data: part.data.toString('base64'), format: part.mime === 'audio/mpeg' ? 'mp3' : 'wav' } });
    else parts.push({ type: 'image_url', image_url: { url: part.url ?? `data:${imageType(part)};base64,${part.data.toString('base64')}` } });
  }
  say(text.length);
  return parts;
}

export function chatTools(tools: ToolSpec[]): Record<string, unknown>[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: tool.parameters ?? { type: 'object' } },
  }));
}

interface Accumulating {
  id?: string;
  name: string;
  arguments: string;
}

/** Reads a provider's answer, SSE chunks or one JSON completion, into a turn; text (and thought) deltas go to onText (onReasoning) as they arrive. */
export async function readChatAnswer(
  response: Response,
  onText: (delta: string) => void,
  provider: string,
  onReasoning?: (delta: string) => void,
): Promise<ChatTurn> {
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('text/event-stream')) return completionTurn(await readAnswerJson(response, provider), provider);
  const turn: ChatTurn = { text: '', toolCalls: [], promptTokens: 0, completionTokens: 0, finishReason: null, reasoning: '' };
  const calls = new Map<number, Accumulating>();
  try {
    await readChunks(response, { onText, onReasoning }, provider, turn, calls);
  } catch (error) {
    if (!(error instanceof LineTooLong)) throw error;
    throw new HearthError('provider_interrupted', `Hearth stopped reading provider "${provider}": ${error.message}; the answer is incomplete.`);
  }
  turn.toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, call]) => ({ id: call.id ?? newId('call_'), name: call.name, arguments: call.arguments || '{}' }));
  return turn;
}

/** The SSE chunks of a streamed answer into `turn` and `calls`. */
async function readChunks(
  response: Response,
  sinks: { onText: (delta: string) => void; onReasoning?: (delta: string) => void },
  provider: string,
  turn: ChatTurn,
  calls: Map<number, Accumulating>,
): Promise<void> {
  for await (const { data } of readEvents(response.body)) {
    if (data === '[DONE]') break;
    const chunk = parseJson(data);
    if (!isObject(chunk)) continue;
    if (isObject(chunk.error))
      // Redacted as an error answer's message is: the provider may echo the request, its key with it.
      throw new HearthError(
        'provider_error',
        redact(`Provider "${provider}" failed mid-answer: ${String(chunk.error.message ?? 'unknown error').slice(0, 500)}`),
      );
    readUsage(chunk.usage, turn);
    const choice = Array.isArray(chunk.choices) && isObject(chunk.choices[0]) ? chunk.choices[0] : undefined;
    if (!choice) continue;
    if (typeof choice.finish_reason === 'string') turn.finishReason = choice.finish_reason;
    const delta = isObject(choice.delta) ? choice.delta : {};
    if (typeof delta.content === 'string' && delta.content) {
      turn.text += delta.content;
      sinks.onText(delta.content);
    }
    const thought = reasoningOf(delta);
    if (thought) {
      turn.reasoning += thought;
      sinks.onReasoning?.(thought);
    }
    for (const part of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      if (!isObject(part)) continue;
      const index = typeof part.index === 'number' ? part.index : calls.size;
      const call = calls.get(index) ?? { name: '', arguments: '' };
      if (typeof part.id === 'string' && part.id) call.id = part.id;
      const fn = isObject(part.function) ? part.function : {};
      if (typeof fn.name === 'string') call.name += fn.name;
      if (typeof fn.arguments === 'string') call.arguments += fn.arguments;
      calls.set(index, call);
    }
  }
}

function completionTurn(json: unknown, provider: string): ChatTurn {
  const choice = isObject(json) && Array.isArray(json.choices) && isObject(json.choices[0]) ? json.choices[0] : undefined;
  const message = choice && isObject(choice.message) ? choice.message : undefined;
  if (!message) throw new HearthError('provider_error', `Provider "${provider}" answered without a chat completion.`);
  const turn: ChatTurn = {
    text: typeof message.content === 'string' ? message.content : '',
    toolCalls: (Array.isArray(message.tool_calls) ? message.tool_calls : []).filter(isObject).map((call) => {
      const fn = isObject(call.function) ? call.function : {};
      return {
        id: typeof call.id === 'string' && call.id ? call.id : newId('call_'),
        name: typeof fn.name === 'string' ? fn.name : '',
        arguments: typeof fn.arguments === 'string' && fn.arguments ? fn.arguments : '{}',
      };
    }),
    promptTokens: 0,
    completionTokens: 0,
    finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : null,
    reasoning: reasoningOf(message),
  };
  readUsage(isObject(json) ? json.usage : undefined, turn);
  return turn;
}

function readUsage(usage: unknown, turn: ChatTurn): void {
  if (!isObject(usage)) return;
  if (typeof usage.prompt_tokens === 'number') turn.promptTokens = usage.prompt_tokens;
  if (typeof usage.completion_tokens === 'number') turn.completionTokens = usage.completion_tokens;
}

/** A message's or delta's thought: `reasoning_content` (DeepSeek, llama-server) or `reasoning` (vLLM, OpenRouter). */
function reasoningOf(part: Record<string, unknown>): string {
  const value = part.reasoning_content ?? part.reasoning;
  return typeof value === 'string' ? value : '';
}
