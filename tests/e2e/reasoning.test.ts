/**
 * A reasoning model's thought on the two OpenAI surfaces of a real server, read by the clients
 * people use: chat completions' reasoning_content (message and stream deltas) and its reasoning
 * token count through the official openai client and the AI SDK's openai-compatible provider;
 * Responses' reasoning items (streamed events and the final response) through the official
 * client. The tiny thinking model's template opens `<think>` and its random weights never close
 * it, so reasoning effort's budget (low: a quarter of the max tokens) is what ends each thought.
 * Runs in process here and on llama-server in the server-engine project.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinyThinkingModelPath } from '../helpers/models.js';
import { newDataDir, startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
let client: OpenAI;

beforeAll(async () => {
  const dataDir = await newDataDir(false);
  mkdirSync(join(dataDir, 'models'), { recursive: true });
  copyFileSync(await tinyThinkingModelPath(), join(dataDir, 'models', 'thinker.gguf'));
  server = await startServer({ dataDir });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});

afterAll(async () => {
  expect(await server.stop()).toBe(0);
});

type Reasoned = { reasoning_content?: string };
const ask = { model: 'thinker', messages: [{ role: 'user' as const, content: 'Think, then answer.' }], max_tokens: 16, seed: 3 };

describe('chat completions with a reasoning model', () => {
  it('returns the thought as reasoning_content and counts its tokens; the budget of effort low ends it and the answer follows', async () => {
    const completion = await client.chat.completions.create({ ...ask, reasoning_effort: 'low' });
    const message = completion.choices[0]!.message as (typeof completion.choices)[0]['message'] & Reasoned;
    expect(message.reasoning_content!.length).toBeGreaterThan(0);
    expect(message.content!.length).toBeGreaterThan(0);
    expect(message.content).not.toContain(message.reasoning_content);
    expect(completion.usage!.completion_tokens).toBe(16);
    expect(completion.usage!.completion_tokens_details!.reasoning_tokens).toBe(4);
  });

  it('streams reasoning_content deltas before the content, and the usage counts the thought', async () => {
    const stream = await client.chat.completions.create({ ...ask, reasoning_effort: 'low', stream: true, stream_options: { include_usage: true } });
    const order: string[] = [];
    let thought = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      const delta = (chunk.choices[0]?.delta ?? {}) as { content?: string | null } & Reasoned;
      if (delta.reasoning_content) {
        thought += delta.reasoning_content;
        order.push('thought');
      }
      if (delta.content) order.push('text');
      usage = chunk.usage ?? usage;
    }
    expect(thought.length).toBeGreaterThan(0);
    expect(order[0]).toBe('thought');
    expect(order.lastIndexOf('thought')).toBeLessThan(order.indexOf('text'));
    expect(usage!.completion_tokens_details!.reasoning_tokens).toBe(4);
  });

  it('gives no thought with reasoning_effort none or chat_template_kwargs.enable_thinking false', async () => {
    const off = await client.chat.completions.create({ ...ask, reasoning_effort: 'none' });
    expect((off.choices[0]!.message as Reasoned).reasoning_content).toBeUndefined();
    expect(off.usage!.completion_tokens_details!.reasoning_tokens).toBe(0);
    expect(off.choices[0]!.message.content!.length).toBeGreaterThan(0);
    const kwargs = await client.chat.completions.create({
      ...ask,
      chat_template_kwargs: { enable_thinking: false },
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect((kwargs.choices[0]!.message as Reasoned).reasoning_content).toBeUndefined();
  });

  it('accepts an earlier answer’s reasoning_content and leaves it out of the prompt', async () => {
    const messages = (reasoning: string | undefined) => [
      { role: 'user' as const, content: 'Hello' },
      { role: 'assistant' as const, content: 'the world', ...(reasoning ? { reasoning_content: reasoning } : {}) },
      { role: 'user' as const, content: 'And then?' },
    ];
    const plain = await client.chat.completions.create({ model: 'thinker', messages: messages(undefined), max_tokens: 2, reasoning_effort: 'none' });
    const withThought = await client.chat.completions.create({
      model: 'thinker',
      messages: messages('a long earlier thought '.repeat(10)),
      max_tokens: 2,
      reasoning_effort: 'none',
    });
    expect(withThought.usage!.prompt_tokens).toBe(plain.usage!.prompt_tokens);
  });

  it('refuses an unknown reasoning_effort', async () => {
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...ask, reasoning_effort: 'extreme' }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { param: string } }).error.param).toBe('reasoning_effort');
  });
});

describe('the AI SDK openai-compatible provider', () => {
  const hearth = () => createOpenAICompatible({ name: 'hearth', baseURL: `${server.url}/v1`, includeUsage: true });
  // One short thought and answer from the thinking model, asked with a low effort.
  const thinking = () => ({
    model: hearth()('thinker'),
    prompt: 'Think, then answer.',
    maxOutputTokens: 16,
    seed: 3,
    maxRetries: 0,
    providerOptions: { hearth: { reasoningEffort: 'low' } },
  });

  it('reads the thought as reasoning, apart from the text', async () => {
    const result = await generateText(thinking());
    expect(result.reasoningText!.length).toBeGreaterThan(0);
    expect(result.text.length).toBeGreaterThan(0);
    expect(result.usage.reasoningTokens).toBe(4);
  });

  it('streams reasoning deltas', async () => {
    const result = streamText(thinking());
    const kinds: string[] = [];
    for await (const part of result.fullStream) if (part.type === 'reasoning-delta' || part.type === 'text-delta') kinds.push(part.type);
    expect(kinds[0]).toBe('reasoning-delta');
    expect(kinds).toContain('text-delta');
    expect((await result.reasoningText)!.length).toBeGreaterThan(0);
  });
});

describe('Responses with a reasoning model', () => {
  const input = 'Think, then answer.';

  it('puts a reasoning item before the message and counts its tokens', async () => {
    const response = await client.responses.create({ model: 'thinker', input, max_output_tokens: 16, reasoning: { effort: 'low' } });
    const [thought, message] = response.output;
    expect(thought).toMatchObject({ type: 'reasoning', summary: [], content: [{ type: 'reasoning_text' }] });
    expect((thought as OpenAI.Responses.ResponseReasoningItem).content![0]!.text.length).toBeGreaterThan(0);
    expect(message!.type).toBe('message');
    expect(response.output_text.length).toBeGreaterThan(0);
    expect(response.usage!.output_tokens_details.reasoning_tokens).toBe(4);
  });

  it('streams the reasoning item’s events before the message’s, and the client’s final response holds both', async () => {
    const stream = client.responses.stream({ model: 'thinker', input, max_output_tokens: 16, reasoning: { effort: 'low' } });
    const types: string[] = [];
    let thought = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.reasoning_text.delta') thought += event.delta;
    }
    const final = await stream.finalResponse();
    expect(types.indexOf('response.reasoning_text.delta')).toBeGreaterThan(types.indexOf('response.output_item.added'));
    expect(types.indexOf('response.reasoning_text.done')).toBeLessThan(types.indexOf('response.output_text.delta'));
    expect((final.output[0] as OpenAI.Responses.ResponseReasoningItem).content![0]!.text).toBe(thought);
    expect(final.output[1]!.type).toBe('message');
    expect(final.output_text.length).toBeGreaterThan(0);
  });

  it('gives no reasoning item with effort none', async () => {
    const response = await client.responses.create({ model: 'thinker', input, max_output_tokens: 8, reasoning: { effort: 'none' } });
    expect(response.output.map((item) => item.type)).toEqual(['message']);
    expect(response.usage!.output_tokens_details.reasoning_tokens).toBe(0);
  });

  it('accepts a reasoning item sent back in input, and continues from a stored response with one', async () => {
    const first = await client.responses.create({ model: 'thinker', input, max_output_tokens: 8, reasoning: { effort: 'low' } });
    const sentBack = await client.responses.create({
      model: 'thinker',
      input: [{ role: 'user', content: input }, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { role: 'user', content: 'More?' }],
      max_output_tokens: 4,
      reasoning: { effort: 'none' },
    });
    expect(sentBack.status).toBe('incomplete');
    const chained = await client.responses.create({
      model: 'thinker',
      input: 'More?',
      previous_response_id: first.id,
      max_output_tokens: 4,
      reasoning: { effort: 'none' },
    });
    expect(chained.output_text.length).toBeGreaterThan(0);
    const items = await client.responses.inputItems.list(sentBack.id);
    expect(items.data.some((item) => item.type === 'reasoning')).toBe(true);
  });
});
