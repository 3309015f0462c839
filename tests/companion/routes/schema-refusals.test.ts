/**
 * A client's schema or stop mistake on a local model is a 400 in the OpenAI shape naming the
 * offending part of the request, never a 500 with the grammar builder's own words.
 */
import { describe, expect, it } from 'vitest';
import type { ErrorBody } from '#shared/api/errors.js';
import { SCHEMA_LIMITS } from '../../../companion/src/inference/json-schema.js';
import { sharedApp } from '../../helpers/app.js';

const hearth = sharedApp();

const user = [{ role: 'user', content: 'Hello' }];

async function refusedAt(url: string, body: object, param: string): Promise<string> {
  const response = await hearth.app.inject({ method: 'POST', url, payload: body });
  expect(response.statusCode, response.body).toBe(400);
  const { error } = response.json() as ErrorBody;
  expect(error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request_error', param });
  expect(error.message.startsWith(`${param} `)).toBe(true);
  expect(error.message).not.toMatch(/\n\s+at /);
  return error.message;
}

describe('schema and stop mistakes on a local model', () => {
  it('a minLength of 1e9 in response_format is 400 with its path', async () => {
    const schema = { type: 'object', properties: { a: { type: 'string', minLength: 1e9 } } };
    const message = await refusedAt(
      '/v1/chat/completions',
      { model: 'tiny', messages: user, max_tokens: 1, response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } },
      'response_format.json_schema.schema.properties.a.minLength',
    );
    expect(message).toContain(`up to ${SCHEMA_LIMITS.count}`);
  });

  it('a self $ref in tool parameters is 400 with its path', async () => {
    const parameters = { $defs: { a: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' };
    await refusedAt(
      '/v1/chat/completions',
      { model: 'tiny', messages: user, max_tokens: 1, tools: [{ type: 'function', function: { name: 'f', parameters } }] },
      'tools[0].function.parameters.$defs.a.$ref',
    );
  });

  it('an empty enum in a Responses text format is 400 with its path', async () => {
    const schema = { type: 'object', properties: { a: { enum: [] } } };
    await refusedAt(
      '/v1/responses',
      { model: 'tiny', input: 'Hello', max_output_tokens: 16, text: { format: { type: 'json_schema', name: 'x', schema } } },
      'text.format.schema.properties.a.enum',
    );
  });

  it('a lone surrogate in stop is 400', async () => {
    await refusedAt('/v1/chat/completions', { model: 'tiny', messages: user, max_tokens: 1, stop: ['END', 'x\ud800'] }, 'stop[1]');
  });
});
