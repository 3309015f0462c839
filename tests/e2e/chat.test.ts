import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { sharedServer } from '../helpers/server.js';

const hearth = sharedServer();

describe('hearth serve with the official openai client', () => {
  it('prints exactly one line on stdout and answers /health', async () => {
    expect(hearth.server.stdout()).toMatch(/^Hearth listening on http:\/\/127\.0\.0\.1:\d+\n$/);
    const health = (await (await fetch(`${hearth.server.url}/health`)).json()) as { status: string; version: string };
    expect(health.status).toBe('ok');
    expect(health.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('lists the tiny model with the extra fields', async () => {
    const page = await hearth.client.models.list();
    const tiny = page.data.find((model) => model.id === 'tiny') as unknown as Record<string, unknown>;
    expect(tiny).toMatchObject({ object: 'model', source: 'local', context_length: 2048, capabilities: ['chat', 'completion', 'tools'] });
    expect(tiny.size_bytes).toBeGreaterThan(100_000);
  });

  it('answers a chat completion with usage', async () => {
    const completion = await hearth.client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 12, seed: 7 });
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.choices[0]!.message.content!.length).toBeGreaterThan(0);
    expect(completion.choices[0]!.finish_reason).toBe('length');
    expect(completion.usage!.completion_tokens).toBe(12);
    expect(completion.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + 12);
  });

  it('is reproducible with a seed', async () => {
    const ask = () =>
      hearth.client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'Same seed' }], max_tokens: 16, seed: 42, temperature: 1 });
    const [first, second] = [await ask(), await ask()];
    expect(first.choices[0]!.message.content).toBe(second.choices[0]!.message.content);
  });

  it('streams deltas and a final usage chunk', async () => {
    const stream = await hearth.client.chat.completions.create({
      model: 'tiny',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Stream please' }] },
      ],
      max_tokens: 20,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let deltas = 0;
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) {
        text += chunk.choices[0].delta.content;
        deltas++;
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(deltas).toBeGreaterThan(1);
    expect(text.length).toBeGreaterThan(0);
    expect(finish).toBe('length');
    expect(usage?.completion_tokens).toBe(20);
  });

  it('returns a tool call when tool_choice is required', async () => {
    const completion = await hearth.client.chat.completions.create({
      model: 'tiny',
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Current weather',
            parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 20 }, unit: { enum: ['c', 'f'] } }, required: ['city', 'unit'] },
          },
        },
      ],
      tool_choice: 'required',
      max_tokens: 200,
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    const call = choice.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.id).toMatch(/^call_/);
    expect(call.function.name).toBe('get_weather');
    const args = JSON.parse(call.function.arguments) as { city: string; unit: string };
    expect(typeof args.city).toBe('string');
    expect(['c', 'f']).toContain(args.unit);
  });

  it('continues after a tool result', async () => {
    const completion = await hearth.client.chat.completions.create({
      model: 'tiny',
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny, 21 C' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      tool_choice: 'none',
      max_tokens: 8,
    });
    expect(completion.choices[0]!.message.content!.length).toBeGreaterThan(0);
  });

  it('produces json_schema output that parses and validates', async () => {
    const completion = await hearth.client.chat.completions.create({
      model: 'tiny',
      messages: [{ role: 'user', content: 'Describe a colour as JSON.' }],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'colour',
          strict: true,
          schema: {
            type: 'object',
            properties: {
              name: { type: 'string', maxLength: 10 },
              warm: { type: 'boolean' },
              tags: { type: 'array', items: { enum: ['a', 'b'] }, maxItems: 3 },
            },
            required: ['name', 'warm', 'tags'],
            additionalProperties: false,
          },
        },
      },
      max_tokens: 300,
    });
    const value = JSON.parse(completion.choices[0]!.message.content!) as { name: string; warm: boolean; tags: string[] };
    expect(Object.keys(value).sort()).toEqual(['name', 'tags', 'warm']);
    expect(typeof value.name).toBe('string');
    expect(value.name.length).toBeLessThanOrEqual(10);
    expect(typeof value.warm).toBe('boolean');
    expect(value.tags.every((tag) => tag === 'a' || tag === 'b')).toBe(true);
  });

  it('produces a JSON object for json_object', async () => {
    const completion = await hearth.client.chat.completions.create({
      model: 'tiny',
      messages: [{ role: 'user', content: 'JSON please' }],
      response_format: { type: 'json_object' },
      max_tokens: 400,
      temperature: 0,
    });
    const [choice] = completion.choices;
    const content = choice!.message.content!;
    // The grammar holds from the first token: an object, whole when the model stopped, cut off at
    // max_tokens otherwise.
    expect(content.trimStart()).toMatch(/^\{/);
    if (choice!.finish_reason === 'stop') {
      const value: unknown = JSON.parse(content);
      expect(typeof value === 'object' && value !== null && !Array.isArray(value), content).toBe(true);
    } else {
      expect(choice!.finish_reason).toBe('length');
      expect(completion.usage!.completion_tokens).toBe(400);
    }
  });

  it('answers errors in the OpenAI shape', async () => {
    const missing = await hearth.client.chat.completions
      .create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');

    const tooLong = await hearth.client.chat.completions
      .create({ model: 'tiny', messages: [{ role: 'user', content: 'word '.repeat(3000) }] })
      .catch((error: unknown) => error);
    expect(tooLong).toBeInstanceOf(OpenAI.BadRequestError);
    expect((tooLong as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('context_length_exceeded');

    const badRole = await hearth.client.chat.completions
      .create({ model: 'tiny', messages: [{ role: 'robot' as 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(badRole).toBeInstanceOf(OpenAI.BadRequestError);
    expect((badRole as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('messages[0].role');
  });
});
