import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { sharedServer } from '../helpers/server.js';

const hearth = sharedServer();

const weather = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  },
};
const messages = [{ role: 'user' as const, content: 'Weather in Paris?' }];

describe('a forced tool call cut off by max_tokens, as OpenAI returns it', () => {
  it('comes back as the partial call in tool_calls with finish_reason length, content null', async () => {
    // Enough tokens to pass the call's name and start its arguments (the tiny model spells most text by the character).
    const completion = await hearth.client.chat.completions.create({
      model: 'tiny',
      messages,
      tools: [weather],
      tool_choice: 'required',
      max_tokens: 40,
      seed: 1,
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('length');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0]! as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe('get_weather');
    expect(call.function.arguments).not.toMatch(/"name"|"arguments"/);
    expect(call.function.arguments.startsWith('{')).toBe(true);
    expect(() => JSON.parse(call.function.arguments)).toThrow();
  });

  it('streams it: the first delta has content null, then the partial call, then finish_reason length', async () => {
    const stream = await hearth.client.chat.completions.create({
      model: 'tiny',
      messages,
      tools: [weather],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      max_tokens: 12,
      seed: 1,
      stream: true,
    });
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: null });
    const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]!.function!.name).toBe('get_weather');
    expect(calls.map((call) => call.function!.arguments).join('')).not.toMatch(/"name"/);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('length');
    expect(chunks.every((chunk) => !chunk.choices[0]?.delta.content)).toBe(true);
  });

  it('a complete forced call still finishes with tool_calls', async () => {
    const city = {
      ...weather,
      function: { ...weather.function, parameters: { ...weather.function.parameters, properties: { city: { enum: ['Paris', 'Rome'] } } } },
    };
    const completion = await hearth.client.chat.completions.create({
      model: 'tiny',
      messages,
      tools: [city],
      tool_choice: 'required',
      max_tokens: 200,
      seed: 1,
    });
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    expect(JSON.parse((completion.choices[0]!.message.tool_calls![0]! as OpenAI.Chat.ChatCompletionMessageFunctionToolCall).function.arguments)).toHaveProperty(
      'city',
    );
  });

  it('in the Responses protocol: an incomplete response whose function_call item holds the partial arguments', async () => {
    const response = await hearth.client.responses.create({
      model: 'tiny',
      input: 'Weather in Paris?',
      tools: [{ type: 'function', name: 'get_weather', parameters: weather.function.parameters, strict: true }],
      tool_choice: 'required',
      max_output_tokens: 12,
    });
    expect(response.status).toBe('incomplete');
    expect(response.output).toHaveLength(1);
    expect(response.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'incomplete' });
    expect((response.output[0] as { arguments: string }).arguments).not.toMatch(/"name"/);
  });
});
