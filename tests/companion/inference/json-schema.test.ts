import { getLlama } from 'node-llama-cpp';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { toGrammarSchema } from '../../../companion/src/inference/json-schema.js';

const refused = (schema: unknown) => {
  try {
    toGrammarSchema(schema, 'schema');
  } catch (error) {
    return error as { code: string; param: string; message: string };
  }
  throw new Error('accepted');
};

describe('tuples and record key names in JSON Schema for grammars', () => {
  it('turns a draft-07 closed tuple (items array, additionalItems false) into prefixItems with maxItems', () => {
    const schema = z.toJSONSchema(z.tuple([z.number(), z.string()]), { target: 'draft-7' });
    expect(schema).toMatchObject({ items: [{}, {}], additionalItems: false });
    expect(toGrammarSchema(schema, 'schema')).toEqual({ type: 'array', prefixItems: [{ type: 'number' }, { type: 'string' }], minItems: 2, maxItems: 2 });
  });

  it('turns a 2020-12 closed tuple (prefixItems, items false) into the same', () => {
    const schema = z.toJSONSchema(z.tuple([z.number(), z.string()]));
    expect(schema).toMatchObject({ prefixItems: [{}, {}], items: false });
    expect(toGrammarSchema(schema, 'schema')).toEqual({ type: 'array', prefixItems: [{ type: 'number' }, { type: 'string' }], minItems: 2, maxItems: 2 });
  });

  it('keeps a tuple’s rest schema in both dialects, and an open tuple open', () => {
    const rest = z.tuple([z.string()]).rest(z.boolean());
    const expected = { type: 'array', prefixItems: [{ type: 'string' }], items: { type: 'boolean' }, minItems: 1 };
    expect(toGrammarSchema(z.toJSONSchema(rest, { target: 'draft-7' }), 'schema')).toEqual(expected);
    expect(toGrammarSchema(z.toJSONSchema(rest), 'schema')).toEqual(expected);
    expect(toGrammarSchema({ type: 'array', items: [{ type: 'null' }] }, 'schema')).toEqual({ type: 'array', prefixItems: [{ type: 'null' }] });
    expect(toGrammarSchema({ type: 'array', items: false }, 'schema')).toEqual({ type: 'array', maxItems: 0 });
  });

  it('accepts propertyNames of type string (z.record) and turns an enum of names into those properties', () => {
    const record = z.toJSONSchema(z.record(z.string(), z.number()), { target: 'draft-7' });
    expect(record).toMatchObject({ propertyNames: { type: 'string' } });
    expect(toGrammarSchema(record, 'schema')).toEqual({ type: 'object', additionalProperties: { type: 'number' } });
    const named = z.toJSONSchema(z.record(z.enum(['a', 'b']), z.boolean()));
    expect(toGrammarSchema(named, 'schema')).toEqual({
      type: 'object',
      properties: { a: { type: 'boolean' }, b: { type: 'boolean' } },
      additionalProperties: false,
      required: ['a', 'b'],
    });
  });

  it('refuses what it cannot enforce on key names, naming the path', () => {
    expect(refused({ type: 'object', propertyNames: { minLength: 2 } })).toMatchObject({
      code: 'invalid_request_error',
      param: 'schema.propertyNames.minLength',
    });
    expect(refused({ type: 'object', propertyNames: { type: 'number' } })).toMatchObject({ param: 'schema.propertyNames.type' });
    expect(refused({ type: 'array', items: [1] })).toMatchObject({ param: 'schema.items[0]' });
  });

  it('takes allOf of checks a grammar ignores (Claude Code’s two patterns of one string), and refuses a member that constrains', () => {
    const to = { type: 'string', description: 'Whom to send it to.', allOf: [{ pattern: '^[^\\n\\r]*$' }, { pattern: '^[\\s\\S]{0,300}$' }, {}] };
    expect(toGrammarSchema({ type: 'object', properties: { to }, required: ['to'] }, 'schema')).toEqual({
      type: 'object',
      properties: { to: { type: 'string', description: 'Whom to send it to.' } },
      required: ['to'],
      additionalProperties: false,
    });
    expect(refused({ type: 'string', allOf: [{ pattern: 'a' }, { maxLength: 3 }] })).toMatchObject({ code: 'invalid_request_error', param: 'schema.allOf[1]' });
    expect(refused({ allOf: [] })).toMatchObject({ param: 'schema.allOf' });
  });

  it('compiles the converted schemas into grammars that node-llama-cpp accepts and that hold the shape', async () => {
    const llama = await getLlama({ gpu: false, build: 'never' });
    const schema = z.toJSONSchema(z.object({ point: z.tuple([z.boolean(), z.enum(['x', 'y'])]), flags: z.record(z.enum(['a', 'b']), z.boolean()) }), {
      target: 'draft-7',
    });
    const grammar = await llama.createGrammarForJsonSchema(toGrammarSchema(schema, 'schema') as never);
    expect(grammar.parse('{"point": [true, "x"], "flags": {"a": false, "b": true}}')).toEqual({ point: [true, 'x'], flags: { a: false, b: true } });
    expect(() => grammar.parse('{"point": [true, "x", 3], "flags": {"a": false, "b": true}}')).toThrow();
  });
});
