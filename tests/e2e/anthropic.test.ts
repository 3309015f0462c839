/**
 * Anthropic's Messages API on a real server, through the official @anthropic-ai/sdk: plain and
 * streamed replies, tools (a named tool forced by the grammar), a tool_result round trip, a
 * thought as thinking blocks, token counts, and what Claude Code sends. Runs on the in-process
 * engine here and on llama-server in the server-engine project (HEARTH_ENGINE).
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { tinyThinkingModelPath } from '../helpers/models.js';
import { perFile } from '../helpers/per-file.js';
import { newDataDir, startServer } from '../helpers/server.js';

const hearth = perFile(
  'The server with the tiny model and the tiny thinking model',
  async () => {
    const dataDir = await newDataDir();
    copyFileSync(await tinyThinkingModelPath(), join(dataDir, 'models', 'thinker.gguf'));
    const server = await startServer({ dataDir });
    return { server, client: new Anthropic({ baseURL: server.url, apiKey: 'unused', maxRetries: 0 }) };
  },
  async ({ server }) => {
    expect(await server.stop()).toBe(0);
  },
);

const client = () => hearth.value.client;
const hello: Anthropic.MessageParam[] = [{ role: 'user', content: 'Hello' }];
const weather: Anthropic.Tool = {
  name: 'get_weather',
  description: 'The weather in a city.',
  input_schema: { type: 'object', properties: { city: { enum: ['Paris', 'Rome'] } }, required: ['city'], additionalProperties: false },
};
const clock: Anthropic.Tool = { name: 'get_time', description: 'The time now.', input_schema: { type: 'object', properties: {} } };

/** The raw wire of a streamed request: each event's `event:` name and its data. */
async function rawEvents(body: Record<string, unknown>): Promise<{ name: string; data: { type: string } & Record<string, unknown> }[]> {
  const response = await fetch(`${hearth.value.server.url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  return (await response.text())
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const name = /^event: (.+)$/m.exec(block)?.[1] ?? '';
      const data = JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? 'null') as { type: string } & Record<string, unknown>;
      return { name, data };
    });
}

describe('messages.create', () => {
  it('answers a Message: text, max_tokens as the stop reason, usage', async () => {
    const message = await client().messages.create({ model: 'tiny', max_tokens: 6, messages: hello });
    expect(message.id).toMatch(/^msg_/);
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: 'tiny', stop_reason: 'max_tokens', stop_sequence: null });
    expect(message.content).toHaveLength(1);
    expect(message.content[0]!.type).toBe('text');
    expect((message.content[0] as Anthropic.TextBlock).text.length).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBe(6);
    expect(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0)).toBeGreaterThan(0);
  });
});

describe('stop_sequences', () => {
  /** A reply as the raw wire gives it (the SDK's types no longer carry temperature), greedy so it is the same each time. */
  async function greedy(extra: Record<string, unknown>): Promise<Anthropic.Message> {
    const response = await fetch(`${hearth.value.server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', max_tokens: 16, temperature: 0, messages: hello, ...extra }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Anthropic.Message;
  }

  it('a stop sequence the model writes ends the text before it, with stop_reason stop_sequence naming it', async () => {
    const whole = ((await greedy({})).content[0] as Anthropic.TextBlock).text;
    const at = Math.floor(whole.length / 2);
    const stop = whole.slice(at, at + 2);
    expect(stop.length).toBe(2);
    const stopped = await greedy({ stop_sequences: ['never written by it \u2603', stop] });
    expect(stopped.stop_reason).toBe('stop_sequence');
    expect(stopped.stop_sequence).toBe(stop);
    expect((stopped.content[0] as Anthropic.TextBlock | undefined)?.text ?? '').toBe(whole.slice(0, whole.indexOf(stop)));
  });
});

describe('streaming', () => {
  it('sends Anthropic’s events in order, each under its own event: name', async () => {
    const events = await rawEvents({ model: 'tiny', max_tokens: 5, messages: hello });
    expect(events.every((event) => event.name === event.data.type)).toBe(true);
    const names = events.map((event) => event.name);
    expect(names.slice(0, 3)).toEqual(['message_start', 'content_block_start', 'ping']);
    expect(names.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(names.slice(3, -3).every((name) => name === 'content_block_delta')).toBe(true);
    const start = events[0]!.data as unknown as Anthropic.RawMessageStartEvent;
    expect(start.message).toMatchObject({ role: 'assistant', model: 'tiny', content: [], stop_reason: null });
    expect(start.message.usage).toBeDefined();
    const delta = events.at(-2)!.data as unknown as Anthropic.RawMessageDeltaEvent;
    expect(delta.delta.stop_reason).toBe('max_tokens');
    expect(delta.usage.output_tokens).toBe(5);
  });

  it('the SDK’s stream gives the text as it comes and a finalMessage() with it', async () => {
    let streamed = '';
    const stream = client().messages.stream({ model: 'tiny', max_tokens: 8, messages: hello });
    stream.on('text', (text) => (streamed += text));
    const message = await stream.finalMessage();
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage.output_tokens).toBe(8);
    expect(message.content).toHaveLength(1);
    expect((message.content[0] as Anthropic.TextBlock).text).toBe(streamed);
    expect(streamed.length).toBeGreaterThan(0);
  });
});

describe('tools', () => {
  it('a named tool_choice is forced by the grammar: a tool_use block with input that follows the schema, stop_reason tool_use', async () => {
    const message = await client().messages.create({
      model: 'tiny',
      max_tokens: 200,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [clock, weather],
      tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
    });
    expect(message.stop_reason).toBe('tool_use');
    const calls = message.content.filter((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.name).toBe('get_weather');
    expect(['Paris', 'Rome']).toContain((calls[0]!.input as { city: string }).city);
  });

  it('streamed: a tool_use block whose input arrives as input_json_delta, parsed by finalMessage()', async () => {
    const deltas: string[] = [];
    const stream = client().messages.stream({
      model: 'tiny',
      max_tokens: 200,
      messages: [{ role: 'user', content: 'Weather in Rome?' }],
      tools: [weather],
      tool_choice: { type: 'any' },
    });
    stream.on('inputJson', (partial) => deltas.push(partial));
    const message = await stream.finalMessage();
    expect(message.stop_reason).toBe('tool_use');
    const call = message.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use')!;
    expect(call.id.length).toBeGreaterThan(0);
    expect(deltas.join('')).toBe(JSON.stringify(call.input));
    expect(['Paris', 'Rome']).toContain((call.input as { city: string }).city);
  });

  it('a tool_result round trip: the call, its result (an error one too), then the reply', async () => {
    const question: Anthropic.MessageParam = { role: 'user', content: 'Weather in Paris?' };
    const first = await client().messages.create({
      model: 'tiny',
      max_tokens: 200,
      messages: [question],
      tools: [weather],
      tool_choice: { type: 'tool', name: 'get_weather' },
    });
    const call = first.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use')!;
    const answer = (content: Anthropic.ToolResultBlockParam['content'], isError?: boolean) =>
      client().messages.create({
        model: 'tiny',
        max_tokens: 4,
        tools: [weather],
        tool_choice: { type: 'none' },
        messages: [
          question,
          { role: 'assistant', content: first.content },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: call.id, content, ...(isError ? { is_error: true } : {}) },
              { type: 'text', text: 'So?' },
            ],
          },
        ],
      });
    const reply = await answer('Sunny, 21 °C');
    expect(reply.stop_reason).toBe('max_tokens');
    expect(reply.content.map((block) => block.type)).toEqual(['text']);
    // The same result as text blocks, marked as an error: the model is told so, and the prompt is longer by the mark.
    const failed = await answer([{ type: 'text', text: 'Sunny, 21 °C' }], true);
    expect(failed.usage.output_tokens).toBe(4);
    const prompt = (usage: Anthropic.Usage) => usage.input_tokens + (usage.cache_read_input_tokens ?? 0);
    expect(prompt(failed.usage)).toBeGreaterThan(prompt(reply.usage));
  });
});

describe('thinking', () => {
  it('a thought comes back as a thinking block before the text; thinking disabled gives none', async () => {
    const message = await client().messages.create({
      model: 'thinker',
      max_tokens: 14,
      messages: hello,
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    // The tiny thinking model never closes its thought: max_tokens ends it.
    expect(message.content[0]!.type).toBe('thinking');
    const thought = message.content[0] as Anthropic.ThinkingBlock;
    expect(thought.thinking.length).toBeGreaterThan(0);
    expect(thought.signature.length).toBeGreaterThan(0);
    const off = await client().messages.create({ model: 'thinker', max_tokens: 6, messages: hello, thinking: { type: 'disabled' } });
    expect(off.content.map((block) => block.type)).toEqual(['text']);
  });

  it('streamed: thinking_delta, then signature_delta, then the text block; the thought sent back is accepted', async () => {
    const events = await rawEvents({ model: 'thinker', max_tokens: 14, messages: hello, thinking: { type: 'enabled', budget_tokens: 5 } });
    const deltas = events.filter((event) => event.name === 'content_block_delta').map((event) => event.data as unknown as Anthropic.RawContentBlockDeltaEvent);
    const kinds = deltas.map((event) => event.delta.type);
    expect(kinds[0]).toBe('thinking_delta');
    const signature = kinds.indexOf('signature_delta');
    expect(signature).toBeGreaterThan(0);
    expect(kinds.slice(0, signature).every((kind) => kind === 'thinking_delta')).toBe(true);
    expect(kinds.slice(signature + 1).every((kind) => kind === 'text_delta')).toBe(true);
    expect(kinds.slice(signature + 1).length).toBeGreaterThan(0);
    const starts = events
      .filter((event) => event.name === 'content_block_start')
      .map((event) => (event.data as unknown as Anthropic.RawContentBlockStartEvent).content_block.type);
    expect(starts).toEqual(['thinking', 'text']);

    const stream = client().messages.stream({ model: 'thinker', max_tokens: 14, messages: hello, thinking: { type: 'enabled', budget_tokens: 5 } });
    const first = await stream.finalMessage();
    expect(first.content.map((block) => block.type)).toEqual(['thinking', 'text']);
    const next = await client().messages.create({
      model: 'thinker',
      max_tokens: 4,
      thinking: { type: 'enabled', budget_tokens: 2 },
      messages: [...hello, { role: 'assistant', content: first.content }, { role: 'user', content: 'And?' }],
    });
    expect(next.usage.output_tokens).toBe(4);
  });
});

describe('countTokens', () => {
  it('counts with the model’s own template and tokenizer, tools and system included (also the beta client’s ?beta=true)', async () => {
    const plain = await client().messages.countTokens({ model: 'tiny', messages: hello });
    expect(plain.input_tokens).toBeGreaterThan(0);
    const created = await client().messages.create({ model: 'tiny', max_tokens: 1, messages: hello });
    expect(plain.input_tokens).toBe(created.usage.input_tokens + (created.usage.cache_read_input_tokens ?? 0));
    const withTools = await client().beta.messages.countTokens({ model: 'tiny', messages: hello, tools: [weather], system: 'Be brief.' });
    expect(withTools.input_tokens).toBeGreaterThan(plain.input_tokens);
  });
});

describe('the prompt cache', () => {
  const onServer = process.env.HEARTH_ENGINE === 'server';
  const long: Anthropic.MessageCreateParamsNonStreaming = {
    model: 'tiny',
    max_tokens: 2,
    system: `You answer questions about a long manual. ${'Each section of the manual explains one part of the machine in detail. '.repeat(20)}`,
    messages: hello,
  };

  it.runIf(onServer)('a repeated prompt reports what llama-server read from its cache, and the parts add up to the prompt', async () => {
    const first = await client().messages.create(long);
    const again = await client().messages.create(long);
    expect(again.usage.cache_read_input_tokens).toBeGreaterThan(100);
    expect(again.usage.input_tokens + again.usage.cache_read_input_tokens!).toBe(first.usage.input_tokens + (first.usage.cache_read_input_tokens ?? 0));
  });

  it.runIf(!onServer)('the in-process engine reports no cache reads (it reuses the prefix too, without counting it)', async () => {
    await client().messages.create(long);
    const again = await client().messages.create(long);
    expect(again.usage.cache_read_input_tokens).toBe(0);
  });
});

describe('what Claude Code sends', () => {
  it('HEAD / answers, then a streamed beta request with its system blocks, tools, thinking and max_tokens 32000 runs to the context’s end', async () => {
    const head = await fetch(hearth.value.server.url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    const tools: Anthropic.Beta.BetaTool[] = Array.from({ length: 24 }, (_, index) => ({
      name: `Tool${index}`,
      description: `Tool number ${index}.`,
      input_schema: {
        type: 'object',
        $schema: 'http://json-schema.org/draft-07/schema#',
        properties: { path: { type: 'string', format: 'uri' } },
        additionalProperties: false,
      },
    }));
    const stream = client().beta.messages.stream({
      model: 'tiny',
      max_tokens: 32000,
      betas: ['claude-code-20250219', 'interleaved-thinking-2025-05-14'],
      system: [
        { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.37.0d9; cc_entrypoint=cli; cch=fa690;' },
        { type: 'text', text: 'You are Claude Code, a CLI for coding.', cache_control: { type: 'ephemeral' } },
      ],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hey', cache_control: { type: 'ephemeral' } }] }],
      tools,
      metadata: { user_id: 'user_0123_account__session_4567' },
      thinking: { type: 'enabled', budget_tokens: 31999 },
      temperature: 1,
    });
    const message = await stream.finalMessage();
    // 32000 is a ceiling, never a 400: the reply ends where the context does.
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeLessThan(32000);
  }, 120_000);
});
