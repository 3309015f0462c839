/**
 * Client schema and grammar mistakes are the client's: a 400 naming the part of the request, found
 * before any prompt is rendered or grammar built, on both engines. And every JSON grammar Hearth
 * builds keeps numbers finite (an exponent of at most two digits).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type Llama, type LlamaContextSequence, type LlamaGrammar } from 'node-llama-cpp';
import { generate } from '../../../companion/src/inference/in-process/generate.js';
import { GrammarCache } from '../../../companion/src/inference/grammar-cache.js';
import type { ModelRuntime } from '../../../companion/src/inference/generation-plan.js';
import { toGrammarSchema, SCHEMA_LIMITS } from '../../../companion/src/inference/json-schema.js';
import { generateOnServer, type ServerRuntime } from '../../../companion/src/inference/server/generate.js';
import type { ServerClient } from '../../../companion/src/inference/server/client.js';
import { toolCallGrammar, type CallSyntax } from '../../../companion/src/inference/server/tool-syntax.js';
import type { GenerationRequest } from '../../../companion/src/inference/types.js';
import { loadLlama } from '../../../companion/src/inference/llama.js';
import { generationRequest } from '../../helpers/models.js';

const deep = (levels: number) => {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let level = 0; level < levels; level++) schema = { type: 'object', properties: { a: schema } };
  return schema;
};

/** The probes of the security review that answered 500, each with the path its 400 must name (under `schema`). */
const PROBES: [name: string, schema: Record<string, unknown>, path: string | RegExp][] = [
  ['a minLength of 1e9', { type: 'object', properties: { a: { type: 'string', minLength: 1e9 } } }, 'schema.properties.a.minLength'],
  ['nesting 2000 deep', deep(2000), new RegExp(`^schema(\\.properties\\.a){${SCHEMA_LIMITS.depth}}$`)],
  ['a self $ref', { $defs: { a: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' }, 'schema.$defs.a.$ref'],
  ['an object in enum', { type: 'object', properties: { a: { enum: ['x', { y: 1 }] } } }, 'schema.properties.a.enum[1]'],
  ['an object in const', { type: 'object', properties: { a: { const: { y: 1 } } } }, 'schema.properties.a.const'],
  ['a lone surrogate in enum', { enum: ['ok', 'half \ud800'] }, 'schema.enum[1]'],
];

function refusal(run: () => unknown): { code: string; status: number; param: string; message: string } {
  try {
    run();
  } catch (error) {
    return error as { code: string; status: number; param: string; message: string };
  }
  throw new Error('accepted');
}

describe('schema mistakes are refused with their path before any grammar is built', () => {
  it.each(PROBES)('%s', (_name, schema, path) => {
    const error = refusal(() => toGrammarSchema(schema, 'schema'));
    expect(error).toMatchObject({ code: 'invalid_request_error', status: 400 });
    expect(error.param).toMatch(typeof path === 'string' ? new RegExp(`^${path.replace(/[.$[\]]/g, '\\$&')}$`) : path);
    expect(error.message.startsWith(`${error.param} `)).toBe(true);
  });

  it('refuses lengths and counts a grammar cannot spell out, alone or together', () => {
    expect(refusal(() => toGrammarSchema({ type: 'array', minItems: SCHEMA_LIMITS.count + 1 }, 's'))).toMatchObject({ param: 's.minItems' });
    // A maximum beyond them is left to the reply's own limit (Claude Code's tools say maxLength 524288 for "no practical limit").
    expect(toGrammarSchema({ type: 'string', maxLength: 524_288 }, 's')).toEqual({ type: 'string' });
    expect(toGrammarSchema({ type: 'array', maxItems: SCHEMA_LIMITS.count + 1, minItems: 2 }, 's')).toEqual({ type: 'array', minItems: 2 });
    expect(refusal(() => toGrammarSchema({ type: 'string', minLength: -1 }, 's'))).toMatchObject({ param: 's.minLength' });
    expect(refusal(() => toGrammarSchema({ type: 'string', maxLength: 2.5 }, 's'))).toMatchObject({ param: 's.maxLength' });
    const many = Object.fromEntries(
      Array.from({ length: Math.ceil(SCHEMA_LIMITS.counts / SCHEMA_LIMITS.count) + 1 }, (_, index) => [
        `p${index}`,
        { type: 'string', maxLength: SCHEMA_LIMITS.count },
      ]),
    );
    expect(refusal(() => toGrammarSchema({ type: 'object', properties: many }, 's')).param).toMatch(/^s\.properties\.p\d+\.maxLength$/);
    expect(toGrammarSchema({ type: 'string', minLength: 1, maxLength: SCHEMA_LIMITS.count }, 's')).toMatchObject({ maxLength: SCHEMA_LIMITS.count });
  });

  it('refuses an empty enum, which no answer could follow (it produced {"a":})', () => {
    expect(refusal(() => toGrammarSchema({ type: 'object', properties: { a: { enum: [] } } }, 's'))).toMatchObject({ param: 's.properties.a.enum' });
  });

  it('refuses a $ref to a definition the schema does not hold, and one outside its scope', () => {
    expect(refusal(() => toGrammarSchema({ $ref: '#/$defs/missing' }, 's'))).toMatchObject({ param: 's.$ref' });
    const sibling = { type: 'object', properties: { a: { $defs: { x: { type: 'string' } }, type: 'string' }, b: { $ref: '#/$defs/x' } } };
    expect(refusal(() => toGrammarSchema(sibling, 's'))).toMatchObject({ param: 's.properties.b.$ref' });
  });

  it('refuses definitions that begin with themselves or never end, and keeps recursion that can end', () => {
    const through = { $defs: { a: { anyOf: [{ type: 'string' }, { $ref: '#/$defs/b' }] }, b: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' };
    expect(refusal(() => toGrammarSchema(through, 's')).param).toMatch(/^s\.\$defs\.[ab](\.anyOf\[1\])?\.\$ref$/);
    const endless = { $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } }, $ref: '#/$defs/node' };
    expect(refusal(() => toGrammarSchema(endless, 's'))).toMatchObject({ param: 's.$ref', message: expect.stringContaining('"node"') });
    const tree = {
      definitions: { node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/definitions/node' } } } } },
      $ref: '#/definitions/node',
    };
    expect(toGrammarSchema(tree, 's')).toMatchObject({ $ref: '#/$defs/node' });
  });
});

const syntax: CallSyntax = {
  triggers: ['<call>'],
  opening: '<call>',
  prefix: '<call>',
  optionalSpace: false,
  paramsPrefix: () => '(',
  suffix: () => ')',
  emptyParams: '',
};

const request = (overrides: Partial<GenerationRequest>): GenerationRequest => generationRequest('tiny', { toolMode: { type: 'auto' }, ...overrides });

/** Nothing of the model is reached: a mistake is refused before the prompt is rendered. */
const untouched = new Proxy(
  {},
  {
    get(_target, key) {
      throw new Error(`the engine was reached (${String(key)})`);
    },
  },
);
const engines: [string, (request: GenerationRequest) => Promise<unknown>][] = [
  ['in-process', (body) => generate(untouched as ModelRuntime, untouched as LlamaContextSequence, body)],
  ['llama-server', (body) => generateOnServer(untouched as ServerRuntime, untouched as ServerClient, body)],
];

describe.each(engines)('the %s engine refuses them before it renders the prompt', (_engine, run) => {
  it.each(PROBES)('%s in tool parameters and in response_format', async (_name, schema) => {
    const tools = await run(request({ tools: [{ name: 'f', parameters: schema }] })).catch((error: unknown) => error);
    expect(tools).toMatchObject({ code: 'invalid_request_error', param: expect.stringMatching(/^tools\[0\]\.function\.parameters\./) });
    const output = await run(request({ output: { type: 'json', schema } })).catch((error: unknown) => error);
    expect(output).toMatchObject({ code: 'invalid_request_error', param: expect.stringMatching(/^response_format\.json_schema\.schema\./) });
  });

  it('a lone surrogate in stop', async () => {
    await expect(run(request({ stop: ['\udc00'] }))).rejects.toMatchObject({ code: 'invalid_request_error', param: 'stop' });
    await expect(run(request({ stop: ['END', 'x\ud83d'] }))).rejects.toMatchObject({ code: 'invalid_request_error', param: 'stop[1]' });
  });
});

describe('what the limits let through, the grammar builder takes', () => {
  it.each(['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties'])('%s at its limit', async (key) => {
    const llama = await loadLlama('cpu');
    const base = key.endsWith('Length')
      ? { type: 'string' }
      : key.endsWith('Items')
        ? { type: 'array', items: { type: 'string' } }
        : { type: 'object', additionalProperties: { type: 'string' } };
    const grammar = await new GrammarCache(llama).forSchema(toGrammarSchema({ ...base, [key]: SCHEMA_LIMITS.count }, 's'));
    expect(grammar.grammar).toContain(String(SCHEMA_LIMITS.count - (key.endsWith('Length') ? 0 : 1)));
  });
});

describe('numbers in the JSON grammars stay finite', () => {
  let llama: Llama;
  let grammars: GrammarCache;
  beforeAll(async () => {
    llama = await loadLlama('cpu');
    grammars = new GrammarCache(llama);
  });
  /** Whether the grammar lets the model write exactly this text (node-llama-cpp's own check). */
  const allows = (grammar: LlamaGrammar, text: string) => (grammar as unknown as { _testText(text: string): boolean })._testText(text);

  it('a json_schema answer and a forced tool call (both engines) take at most two exponent digits', async () => {
    const schema = toGrammarSchema({ type: 'object', properties: { n: { type: 'integer' }, x: { type: 'number' } } }, 's');
    const answer = await grammars.forSchema(schema);
    expect(allows(answer, '{"n": 4001590033235834e99, "x": -1.5e-99}\n\n\n\n')).toBe(true);
    expect(allows(answer, '{"n": 4001590033235834e9590132717135313, "x": 1}\n\n\n\n')).toBe(false);
    expect(allows(answer, '{"n": 1e100, "x": 1}\n\n\n\n')).toBe(false);
    expect(allows(answer, '{"n": 1, "x": 1.5E+308}\n\n\n\n')).toBe(false);
    const forced = await grammars.forTools([['f', schema]]);
    expect(allows(forced, '{"name": "f", "arguments": {"n": 1e99, "x": 2}}\n\n\n\n')).toBe(true);
    expect(allows(forced, '{"name": "f", "arguments": {"n": 1e999, "x": 2}}\n\n\n\n')).toBe(false);
  });

  it('json_object answers take at most two exponent digits', async () => {
    const json = await grammars.anyJson();
    expect(allows(json, '{"n": 1e99}')).toBe(true);
    expect(allows(json, '{"n": 1e123}')).toBe(false);
  });

  it("the llama-server engine's tool-call grammar takes at most two exponent digits", async () => {
    const params = await grammars.forParams(toGrammarSchema({ type: 'object', properties: { n: { type: 'integer' } } }, 's'));
    const calls = await llama.createGrammar({ grammar: toolCallGrammar(syntax, [{ name: 'f', paramsGrammar: params.grammar }]) });
    expect(allows(calls, '<call>f({"n": 12e34})')).toBe(true);
    expect(allows(calls, '<call>f({"n": 12e345})')).toBe(false);
  });
});
