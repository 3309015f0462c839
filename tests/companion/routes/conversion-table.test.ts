import { describe, expect, it } from 'vitest';
import type { HistoryItem, ToolMode, ToolSpec } from '../../../companion/src/inference/types.js';
import { generationOf as anthropicGeneration } from '../../../companion/src/routes/anthropic/convert.js';
import { historyOf as ollamaHistory, maxTokensOf, samplingOf, toolsOf as ollamaTools } from '../../../companion/src/routes/ollama/convert.js';
import { messagesToHistory, stopList, toolModeOf as chatToolMode, toolsOf as chatTools } from '../../../companion/src/routes/openai/convert.js';
import {
  historyOf as responsesHistory,
  inputItemsOf,
  toolModeOf as responsesToolMode,
  toolsOf as responsesTools,
} from '../../../companion/src/routes/openai/responses-convert.js';
import type { MessageCreateRequest } from '#shared/api/anthropic.js';
import type { ChatCompletionRequest } from '#shared/api/openai.js';
import type { OllamaChatRequest } from '#shared/api/ollama.js';
import type { ResponseCreateRequest } from '#shared/api/responses.js';

/*
 * One generation path, several dialects: the same conversation written in each protocol a client
 * may speak becomes the same neutral request (history, tools, tool choice, sampling) before any
 * engine sees it. A system prompt, a question, the assistant's tool call, its result and a
 * follow-up, with one tool forced by name where the dialect can name one.
 */

const SYSTEM = 'You are terse.';
const QUESTION = 'What is the weather in Paris?';
const FOLLOW_UP = 'And tomorrow?';
const RESULT = '18 C, cloudy';
const PARAMETERS = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const TOOL = { name: 'get_weather', description: 'Weather for a city', parameters: PARAMETERS };

const chat: ChatCompletionRequest = {
  model: 'tiny',
  messages: [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: QUESTION },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: RESULT },
    { role: 'user', content: FOLLOW_UP },
  ],
  tools: [{ type: 'function', function: TOOL }],
  tool_choice: { type: 'function', function: { name: 'get_weather' } },
  temperature: 0.5,
  top_p: 0.9,
  max_tokens: 100,
  stop: ['END'],
};

const responses: ResponseCreateRequest = {
  model: 'tiny',
  instructions: SYSTEM,
  input: [
    { role: 'user', content: QUESTION },
    { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { type: 'function_call_output', call_id: 'call_1', output: RESULT },
    { role: 'user', content: FOLLOW_UP },
  ],
  tools: [{ type: 'function', ...TOOL }],
  tool_choice: { type: 'function', name: 'get_weather' },
} as ResponseCreateRequest;

const anthropic: MessageCreateRequest = {
  model: 'tiny',
  system: SYSTEM,
  max_tokens: 100,
  temperature: 0.5,
  top_p: 0.9,
  stop_sequences: ['END'],
  messages: [
    { role: 'user', content: QUESTION },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'call_1', content: RESULT },
        { type: 'text', text: FOLLOW_UP },
      ],
    },
  ],
  tools: [{ name: TOOL.name, description: TOOL.description, input_schema: PARAMETERS }],
  tool_choice: { type: 'tool', name: 'get_weather' },
} as MessageCreateRequest;

const ollama: OllamaChatRequest = {
  model: 'tiny',
  messages: [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: QUESTION },
    { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
    { role: 'tool', tool_name: 'get_weather', content: RESULT },
    { role: 'user', content: FOLLOW_UP },
  ],
  tools: [{ type: 'function', function: TOOL }],
  options: { temperature: 0.5, top_p: 0.9, num_predict: 100, stop: ['END'] },
} as OllamaChatRequest;

/** The history with call ids numbered in order of appearance (Ollama's calls carry none) and arguments parsed. */
function normalised(history: HistoryItem[]): unknown[] {
  const ids = new Map<string, string>();
  const idOf = (id: string) => ids.get(id) ?? (ids.set(id, `call_${ids.size + 1}`), ids.get(id)!);
  return history.map((item) => {
    if (item.role === 'assistant')
      return { ...item, toolCalls: item.toolCalls.map((call) => ({ id: idOf(call.id), name: call.name, arguments: JSON.parse(call.arguments) as unknown })) };
    if (item.role === 'tool') return { ...item, callId: idOf(item.callId) };
    return item;
  });
}

interface Neutral {
  history: HistoryItem[];
  tools: ToolSpec[];
  toolMode?: ToolMode;
  sampling?: { temperature?: number; topP?: number };
  maxTokens?: number;
  stop?: string[];
}

function dialects(): Record<string, Neutral> {
  const chatToolsList = chatTools(chat);
  const responsesToolsList = responsesTools(responses.tools as never);
  const messages = anthropicGeneration(anthropic);
  return {
    chat: {
      history: messagesToHistory(chat.messages),
      tools: chatToolsList,
      toolMode: chatToolMode(chat.tool_choice, chatToolsList),
      sampling: { temperature: chat.temperature ?? undefined, topP: chat.top_p ?? undefined },
      maxTokens: chat.max_tokens ?? undefined,
      stop: stopList(chat.stop),
    },
    responses: {
      history: responsesHistory(responses.instructions, [], inputItemsOf(responses.input)),
      tools: responsesToolsList,
      toolMode: responsesToolMode(responses.tool_choice, responsesToolsList),
    },
    anthropic: {
      history: messages.history,
      tools: messages.tools,
      toolMode: messages.toolMode,
      sampling: { temperature: messages.sampling.temperature, topP: messages.sampling.topP },
      maxTokens: messages.maxTokens,
      stop: messages.stop,
    },
    ollama: {
      history: ollamaHistory(ollama.messages ?? []),
      tools: ollamaTools(ollama.tools),
      sampling: { temperature: samplingOf(ollama.options).temperature, topP: samplingOf(ollama.options).topP },
      maxTokens: maxTokensOf(ollama.options),
      stop: ollama.options?.stop as string[],
    },
  };
}

describe('the same conversation in every dialect', () => {
  const all = dialects();
  const reference = all.chat!;

  it('chat completions gives the conversation itself', () => {
    expect(normalised(reference.history)).toEqual([
      { role: 'system', text: SYSTEM },
      { role: 'user', text: QUESTION },
      { role: 'assistant', text: '', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { role: 'tool', callId: 'call_1', output: RESULT },
      { role: 'user', text: FOLLOW_UP },
    ]);
    expect(reference.tools).toEqual([TOOL]);
    expect(reference.toolMode).toEqual({ type: 'named', name: 'get_weather' });
  });

  for (const name of ['responses', 'anthropic', 'ollama']) {
    it(`${name} gives the same history and tools as chat completions`, () => {
      const neutral = all[name]!;
      expect(normalised(neutral.history)).toEqual(normalised(reference.history));
      expect(neutral.tools).toEqual(reference.tools);
    });
  }

  it('a tool named in tool_choice is forced the same way where the dialect can name one', () => {
    expect(all.responses!.toolMode).toEqual(reference.toolMode);
    expect(all.anthropic!.toolMode).toEqual(reference.toolMode);
  });

  it('sampling, the reply budget and stop texts say the same in each dialect that has them', () => {
    for (const name of ['anthropic', 'ollama']) {
      const neutral = all[name]!;
      expect([neutral.sampling, neutral.maxTokens, neutral.stop]).toEqual([reference.sampling, reference.maxTokens, reference.stop]);
    }
  });
});
