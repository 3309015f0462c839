import type { InjectOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { checkDocument } from '../../../companion/src/config/document.js';
import { schemaMessage, typesInWords } from '../../../companion/src/schema-messages.js';
import type { ErrorBody } from '#shared/api/errors.js';
import { asOwner, sharedApp } from '../../helpers/app.js';

/*
 * Validation messages name types and limits in words (issue 18, item 16): "max_tokens must be an
 * integer or null", never "max_tokens must be integer,null" or "must be >= 1". Every schema
 * error goes through one wording, for request bodies, paths and queries, the configuration
 * document and tool arguments.
 */

const hearth = sharedApp({ withModel: false });

const user = [{ role: 'user', content: 'Hello' }];
const chat = (body: Record<string, unknown>): InjectOptions => ({
  method: 'POST',
  url: '/v1/chat/completions',
  payload: { model: 'tiny', messages: user, ...body },
});

async function said(request: InjectOptions): Promise<{ message: string; param: string | null }> {
  const response = await hearth.app.inject(request);
  expect(response.statusCode, response.body).toBe(400);
  const { error } = response.json() as ErrorBody;
  expect(error.code).toBe('invalid_request_error');
  return { message: error.message, param: error.param };
}

describe('400 messages of request validation', () => {
  it('name types in words', async () => {
    const cases: [InjectOptions, string, string][] = [
      [chat({ max_tokens: '5' }), 'max_tokens', 'max_tokens must be an integer or null.'],
      [chat({ max_tokens: 2.5 }), 'max_tokens', 'max_tokens must be an integer or null.'],
      [chat({ temperature: '0.5' }), 'temperature', 'temperature must be a number or null.'],
      [chat({ stream: 'yes' }), 'stream', 'stream must be a boolean or null.'],
      [chat({ user: 7 }), 'user', 'user must be a string.'],
      [chat({ messages: 'Hello' }), 'messages', 'messages must be an array.'],
      [chat({ stream_options: [] }), 'stream_options', 'stream_options must be an object or null.'],
      // anyOf of types: every allowed type is named.
      [chat({ stop: 5 }), 'stop', 'stop must be a string, an array or null.'],
      [chat({ messages: [{ role: 'user', content: 5 }] }), 'messages[0].content', 'messages[0].content must be a string, an array or null.'],
      // anyOf where a form fits the type: what is wrong inside it is told.
      [chat({ messages: [{ role: 'user', content: [{ type: 5 }] }] }), 'messages[0].content[0].type', 'messages[0].content[0].type must be a string.'],
      [{ method: 'POST', url: '/agents/helper/run', payload: { input: 5 } }, 'input', 'input must be a string or an array.'],
    ];
    for (const [request, param, message] of cases) expect(await said(request), JSON.stringify(request.payload)).toEqual({ message, param });
  });

  it('name limits, lengths and counts in words', async () => {
    const cases: [InjectOptions, string, string][] = [
      [chat({ max_tokens: 0 }), 'max_tokens', 'max_tokens must be at least 1.'],
      [chat({ temperature: 3 }), 'temperature', 'temperature must be at most 2.'],
      [chat({ n: 2 }), 'n', 'n must be at most 1.'],
      [chat({ model: '' }), 'model', 'model must not be empty.'],
      [chat({ messages: [] }), 'messages', 'messages must not be empty.'],
      [chat({ stop: ['a', 'b', 'c', 'd', 'e'] }), 'stop', 'stop must have at most 4 items.'],
      [
        chat({ messages: [{ role: 'wizard', content: 'Hi' }] }),
        'messages[0].role',
        'messages[0].role must be one of: "system", "developer", "user", "assistant", "tool".',
      ],
      [chat({ model: undefined }), 'model', 'model is required.'],
      [{ method: 'GET', url: '/agents/runs/run_x/events?after=abc' }, 'after', 'after must match the pattern ^[0-9]{1,12}$.'],
    ];
    for (const [request, param, message] of cases) expect(await said(request), JSON.stringify(request.payload ?? request.url)).toEqual({ message, param });
  });

  it('never list JSON types with commas or limits with comparison signs', async () => {
    for (const body of [
      { max_tokens: '1' },
      { seed: 'x' },
      { logprobs: 1 },
      { top_p: -1 },
      { presence_penalty: 9 },
      { tools: [{ type: 'function', function: { name: 'a b' } }] },
    ]) {
      const { message } = await said(chat(body));
      expect(message, JSON.stringify(body)).not.toMatch(/\b[a-z]+,[a-z]+\b|[<>]=?\s*-?\d/);
    }
  });
});

describe('the same wording elsewhere', () => {
  it('in configuration problems, which also say the whole range a setting accepts', () => {
    const { problems } = checkDocument({ version: 1, server: { port: 'x', body_limit_mb: 0 }, models: { parallel: 0 } });
    expect(problems).toEqual(
      expect.arrayContaining([
        'server.port: must be a whole number from 0 to 65535',
        'server.body_limit_mb: must be a number (more than 0, at most 1024)',
        'models.parallel: must be "auto" or a whole number from 1 to 64',
      ]),
    );
    expect(problems.join('\n')).not.toMatch(/integer|anyOf|must match|schema/);
  });

  it('built from the same words for bounds, lengths and forms, in request bodies and in configuration problems', async () => {
    const { problems } = checkDocument({
      version: 1,
      server: { body_limit_mb: 0 },
      agents: [{ id: 'helper', name: 'x'.repeat(201) }],
      remote_hosts: [{ name: 'Home Box', url: 'http://192.0.2.1:4778' }],
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'server.body_limit_mb: must be a number (more than 0, at most 1024)',
        'agents[0].name: must be at most 200 characters long',
        'remote_hosts[0].name: must be lowercase letters, digits, ".", "_" and "-", starting with a letter or digit',
        'remote_hosts[0].url: must be an https:// address',
      ]),
    );
    const host = { name: 'home', url: 'https://192.0.2.1:4778', code: 'ABCD-1234', fingerprint: 'AB:CD' };
    const cases: [InjectOptions, string, string][] = [
      [asOwner({ method: 'POST', url: '/admin/keys', payload: { label: 'x', expires_in_days: 0 } }), 'expires_in_days', 'expires_in_days must be more than 0.'],
      [asOwner({ method: 'POST', url: '/admin/keys', payload: { label: 'x'.repeat(201) } }), 'label', 'label must be at most 200 characters long.'],
      [
        asOwner({ method: 'POST', url: '/admin/remote-hosts', payload: { ...host, name: 'Home Box' } }),
        'name',
        'name must be lowercase letters, digits, ".", "_" and "-", starting with a letter or digit.',
      ],
      [asOwner({ method: 'POST', url: '/admin/remote-hosts', payload: { ...host, url: 'http://192.0.2.1:4778' } }), 'url', 'url must be an https:// address.'],
    ];
    for (const [request, param, message] of cases) expect(await said(request), JSON.stringify(request.payload)).toEqual({ message, param });
  });

  it('for each keyword', () => {
    const at = (keyword: string, params: Record<string, unknown>) => schemaMessage({ keyword, instancePath: '', params });
    expect(typesInWords(['integer', 'null'])).toBe('an integer or null');
    expect(typesInWords('integer,null')).toBe('an integer or null');
    expect(typesInWords(['null', 'boolean', 'object'])).toBe('a boolean, an object or null');
    expect(typesInWords(['number', 'integer'])).toBe('a number');
    expect(at('minLength', { limit: 3 })).toBe('must be at least 3 characters long');
    expect(at('maxLength', { limit: 1 })).toBe('must be at most 1 character long');
    expect(at('minItems', { limit: 2 })).toBe('must have at least 2 items');
    expect(at('exclusiveMaximum', { comparison: '<', limit: 5 })).toBe('must be less than 5');
    expect(at('exclusiveMinimum', { comparison: '>', limit: 0 })).toBe('must be more than 0');
    expect(at('pattern', { pattern: '^https://' })).toBe('must be an https:// address');
    expect(at('pattern', { pattern: '^[0-9]+$' })).toBe('must match the pattern ^[0-9]+$');
    expect(at('const', { allowedValue: 'function' })).toBe('must be "function"');
    expect(at('multipleOf', { multipleOf: 8 })).toBe('must be a multiple of 8');
    expect(at('format', { format: 'uri' })).toBe('must be a valid uri');
    expect(at('required', { missingProperty: 'url' })).toBe('must have the field "url"');
    expect(at('uniqueItems', { i: 3, j: 1 })).toBe('must not repeat an item (items 1 and 3 are the same)');
  });
});
