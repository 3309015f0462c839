import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateObject } from 'ai';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sharedServer } from '../helpers/server.js';

const hearth = sharedServer();

// Bounded shapes, so that even the random-weight model always finishes the JSON.
const shape = z.object({
  point: z.tuple([z.boolean(), z.enum(['x', 'y'])]),
  flags: z.record(z.enum(['a', 'b']), z.boolean()),
});

describe('structured output with zod tuples and records', () => {
  it('follows a zod schema sent with the official client’s zodResponseFormat (chat.completions.parse)', async () => {
    const format = zodResponseFormat(z.object({ warm: z.boolean(), colour: z.enum(['red', 'blue']), tags: z.array(z.enum(['a', 'b'])).max(2) }), 'colour');
    const completion = await hearth.client.chat.completions.parse({
      model: 'tiny',
      messages: [{ role: 'user', content: 'Describe a colour.' }],
      response_format: format,
      max_tokens: 200,
      seed: 2,
    });
    const parsed = completion.choices[0]!.message.parsed!;
    expect(typeof parsed.warm).toBe('boolean');
    expect(['red', 'blue']).toContain(parsed.colour);
  });

  for (const target of ['draft-7', 'draft-2020-12'] as const) {
    it(`follows a zod tuple and enum-keyed record in ${target} JSON Schema (closed tuple, propertyNames)`, async () => {
      const schema = z.toJSONSchema(shape, { target });
      const completion = await hearth.client.chat.completions.create({
        model: 'tiny',
        messages: [{ role: 'user', content: 'A point and flags, please.' }],
        response_format: { type: 'json_schema', json_schema: { name: 'shape', strict: true, schema } },
        max_tokens: 200,
        seed: 4,
      });
      expect(completion.choices[0]!.finish_reason).toBe('stop');
      const value = shape.parse(JSON.parse(completion.choices[0]!.message.content!));
      expect(value.point).toHaveLength(2);
      expect(Object.keys(value.flags).sort()).toEqual(['a', 'b']);
    });
  }

  it('accepts propertyNames of type string (z.record with string keys) instead of answering 400', async () => {
    const schema = z.toJSONSchema(z.object({ scores: z.record(z.string(), z.boolean()) }), { target: 'draft-7' });
    expect(JSON.stringify(schema)).toContain('"propertyNames":{"type":"string"}');
    const completion = await hearth.client.chat.completions.create({
      model: 'tiny',
      messages: [{ role: 'user', content: 'Scores?' }],
      response_format: { type: 'json_schema', json_schema: { name: 'scores', schema } },
      max_tokens: 16,
    });
    expect(['stop', 'length']).toContain(completion.choices[0]!.finish_reason);
    expect(completion.choices[0]!.message.content).toMatch(/^\{\s*"scores"/);
  });

  it('answers the Vercel AI SDK’s generateObject with a zod tuple and record (structured outputs on)', async () => {
    const provider = createOpenAICompatible({ name: 'hearth', baseURL: `${hearth.server.url}/v1`, supportsStructuredOutputs: true });
    const result = await generateObject({ model: provider('tiny'), schema: shape, prompt: 'A point and flags.', maxOutputTokens: 200, seed: 6, maxRetries: 0 });
    expect(result.object.point).toHaveLength(2);
    expect(typeof result.object.point[0]).toBe('boolean');
    expect(Object.keys(result.object.flags).sort()).toEqual(['a', 'b']);
    expect(result.finishReason).toBe('stop');
  });

  it('still refuses a keyword it cannot enforce on key names, naming its path', async () => {
    const error = await hearth.client.chat.completions
      .create({
        model: 'tiny',
        messages: [{ role: 'user', content: 'x' }],
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', propertyNames: { maxLength: 3 } } } },
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('response_format.json_schema.schema.propertyNames.maxLength');
  });
});
