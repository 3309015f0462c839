import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { ErrorBody } from '#shared/api/errors.js';
import type { ModelList, ModelRecord } from '#shared/api/openai.js';
import { asOwner, sharedApp } from '../../helpers/app.js';

const hearth = sharedApp();

const user = [{ role: 'user', content: 'Hello' }];

function chat(body: unknown) {
  return hearth.app.inject({ method: 'POST', url: '/v1/chat/completions', payload: body as object });
}

function raw(payload: string | Buffer, contentType: string | undefined) {
  return hearth.app.inject({ method: 'POST', url: '/v1/chat/completions', payload, headers: contentType ? { 'content-type': contentType } : {} });
}

/** A 400 invalid_request_error for this body, naming `param` (and `mention` in its message). */
async function refused(body: unknown, param: string, mention?: string | RegExp): Promise<ErrorBody['error']> {
  return expectError(await chat(body), 400, 'invalid_request_error', param, mention);
}

/** Asserts the OpenAI error shape, the status, the code, the param, and that the message names `mention`. */
function expectError(response: LightMyRequestResponse, status: number, code: string, param: string | null, mention?: string | RegExp): ErrorBody['error'] {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = response.json() as ErrorBody;
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(body.error.code).toBe(code);
  expect(body.error.param).toBe(param);
  expect(body.error.type).toBe(status >= 500 ? 'server_error' : status === 403 ? 'permission_error' : 'invalid_request_error');
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  if (mention !== undefined) {
    if (typeof mention === 'string') expect(body.error.message).toContain(mention);
    else expect(body.error.message).toMatch(mention);
  }
  return body.error;
}

describe('POST /v1/chat/completions refuses bad bodies before generating', () => {
  it('malformed JSON is 400 invalid_json', async () => {
    const response = await raw('{"model": "tiny", "messages": [', 'application/json');
    expectError(response, 400, 'invalid_json', null, /JSON/);
  });

  it('an empty body with a JSON content type is 400 invalid_json', async () => {
    const response = await raw('', 'application/json');
    expectError(response, 400, 'invalid_json', null, /empty/i);
  });

  it('a non-JSON content type is 415', async () => {
    const form = await raw('model=tiny&messages=hi', 'application/x-www-form-urlencoded');
    expectError(form, 415, 'unsupported_media_type', null, /application\/json/);
    const xml = await raw('<chat/>', 'application/xml');
    expectError(xml, 415, 'unsupported_media_type', null, /application\/json/);
  });

  it('a text/plain body (even one carrying JSON) is 415 naming application/json', async () => {
    // Fastify parses text/plain by default; the route must still say the content type is wrong,
    // not "body must be object".
    const response = await raw(JSON.stringify({ model: 'tiny', messages: user, max_tokens: 1 }), 'text/plain');
    expectError(response, 415, 'unsupported_media_type', null, /application\/json/);
  });

  it('a body over the 8 MiB limit is 413 request_too_large', async () => {
    const big = JSON.stringify({ model: 'tiny', max_tokens: 1, messages: [{ role: 'user', content: 'x'.repeat(8 * 1024 * 1024 + 16) }] });
    expect(Buffer.byteLength(big)).toBeGreaterThan(8 * 1024 * 1024);
    const response = await raw(big, 'application/json');
    expectError(response, 413, 'request_too_large', null, /too large|larger/i);
  });

  it('a missing model is 400 naming model', async () => {
    await refused({ messages: user, max_tokens: 1 }, 'model', 'model');
  });

  it('an empty model is 400 naming model', async () => {
    await refused({ model: '', messages: user, max_tokens: 1 }, 'model', 'model');
  });

  it('missing messages is 400 naming messages', async () => {
    await refused({ model: 'tiny', max_tokens: 1 }, 'messages', 'messages');
  });

  it('messages: [] is 400 naming messages', async () => {
    await refused({ model: 'tiny', messages: [], max_tokens: 1 }, 'messages', 'messages');
  });

  it('messages that is not an array is 400 naming messages', async () => {
    await refused({ model: 'tiny', messages: 'Hello', max_tokens: 1 }, 'messages', /messages.*array/);
    await refused({ model: 'tiny', messages: { role: 'user', content: 'Hello' }, max_tokens: 1 }, 'messages', /messages.*array/);
  });

  it('max_tokens: "5" is 400, not coerced to 5', async () => {
    await refused({ model: 'tiny', messages: user, max_tokens: '5' }, 'max_tokens', /max_tokens.*integer/);
  });

  it('max_tokens: 0 and 2.5 are 400', async () => {
    await refused({ model: 'tiny', messages: user, max_tokens: 0 }, 'max_tokens', 'max_tokens');
    await refused({ model: 'tiny', messages: user, max_tokens: 2.5 }, 'max_tokens', 'max_tokens');
  });

  it('temperature: 3 is 400 naming temperature', async () => {
    await refused({ model: 'tiny', messages: user, max_tokens: 1, temperature: 3 }, 'temperature', /temperature.*2/);
  });

  it('temperature: "0.5" is 400, not coerced', async () => {
    await refused({ model: 'tiny', messages: user, max_tokens: 1, temperature: '0.5' }, 'temperature', 'temperature');
  });

  it('stream: "yes" is 400 naming stream', async () => {
    await refused({ model: 'tiny', messages: user, max_tokens: 1, stream: 'yes' }, 'stream', /stream.*boolean/);
  });

  it('an unknown role is 400 with param messages[0].role', async () => {
    const error = await refused({ model: 'tiny', messages: [{ role: 'wizard', content: 'Hi' }], max_tokens: 1 }, 'messages[0].role', 'messages[0].role');
    expect(error.message).toMatch(/user/);
  });

  it('an unknown role later in the list names its index', async () => {
    await refused({ model: 'tiny', messages: [...user, { role: 'robot', content: 'Hi' }], max_tokens: 1 }, 'messages[1].role', 'messages[1].role');
  });

  it('an image_url part that holds no image is 400 invalid_image naming it', async () => {
    const response = await chat({
      model: 'tiny',
      max_tokens: 1,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
      ],
    });
    const error = expectError(response, 400, 'invalid_image', 'messages[0].content[1].image_url.url', 'is not an image local models here can read');
    expect(error.message).toContain('messages[0].content[1]');
  });

  it('a tool message without tool_call_id is 400 naming tool_call_id', async () => {
    await refused(
      {
        model: 'tiny',
        max_tokens: 1,
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
          { role: 'tool', content: 'sunny' },
        ],
      },
      'messages[2].tool_call_id',
      'tool_call_id',
    );
  });

  it('a tool result whose id no assistant call has is 400 naming the message and the id', async () => {
    const error = await refused(
      {
        model: 'tiny',
        max_tokens: 1,
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'call_nope', content: 'sunny' },
        ],
      },
      'messages[2]',
      'call_nope',
    );
    expect(error.message).toContain('messages[2]');
  });

  it('tool_choice "required" with no tools is 400 naming tool_choice', async () => {
    await refused({ model: 'tiny', messages: user, max_tokens: 1, tool_choice: 'required' }, 'tool_choice', 'tools');
    await refused({ model: 'tiny', messages: user, max_tokens: 1, tool_choice: 'required', tools: [] }, 'tool_choice', 'tools');
  });

  it('tool_choice naming a tool that is not in tools is 400 naming the tool', async () => {
    await refused(
      {
        model: 'tiny',
        max_tokens: 1,
        messages: user,
        tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
        tool_choice: { type: 'function', function: { name: 'stocks' } },
      },
      'tool_choice',
      '"stocks"',
    );
  });

  it('tool_choice naming a tool when tools is absent is 400 naming the tool', async () => {
    await refused({ model: 'tiny', max_tokens: 1, messages: user, tool_choice: { type: 'function', function: { name: 'stocks' } } }, 'tool_choice', '"stocks"');
  });

  it('a tools schema with an unsupported keyword (if/then) is 400 naming its path', async () => {
    const error = await refused(
      {
        model: 'tiny',
        max_tokens: 1,
        messages: user,
        tools: [
          { type: 'function', function: { name: 'ok', parameters: { type: 'object', properties: { a: { type: 'string' } } } } },
          {
            type: 'function',
            function: {
              name: 'weather',
              parameters: {
                type: 'object',
                properties: { unit: { type: 'string' }, city: { type: 'string' } },
                if: { properties: { unit: { const: 'metric' } } },
                then: { required: ['city'] },
              },
            },
          },
        ],
      },
      'tools[1].function.parameters.if',
      'tools[1].function.parameters.if',
    );
    expect(error.message).toContain('"if"');
  });

  it('an unsupported keyword nested inside properties names the nested path', async () => {
    await refused(
      {
        model: 'tiny',
        max_tokens: 1,
        messages: user,
        tools: [
          {
            type: 'function',
            function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string', not: { const: 'Paris' } } } } },
          },
        ],
        tool_choice: 'required',
      },
      'tools[0].function.parameters.properties.city.not',
      'properties.city.not',
    );
  });

  it('n: 2 is 400 naming n', async () => {
    await refused({ model: 'tiny', messages: user, max_tokens: 1, n: 2 }, 'n', /\bn\b/);
  });

  it('logprobs: true is 400 naming logprobs', async () => {
    await refused({ model: 'tiny', messages: user, max_tokens: 1, logprobs: true }, 'logprobs', 'logprobs');
  });

  it('an unknown model is 404 model_not_found with param model and names the model', async () => {
    expectError(await chat({ model: 'no-such-model', messages: user, max_tokens: 1 }), 404, 'model_not_found', 'model', 'no-such-model');
  });

  it('a model id shaped like <provider>/<model> with no such provider is 404 model_not_found', async () => {
    expectError(await chat({ model: 'nobody/some-model', messages: user, max_tokens: 1 }), 404, 'model_not_found', 'model', 'nobody/some-model');
  });

  it('a valid request still succeeds after all of this', async () => {
    const response = await chat({ model: 'tiny', messages: user, max_tokens: 3, seed: 1 });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json() as { model: string; choices: { finish_reason: string }[]; usage: { completion_tokens: number } };
    expect(body.model).toBe('tiny');
    expect(body.usage.completion_tokens).toBe(3);
    expect(body.choices[0]!.finish_reason).toBe('length');
  });
});

describe('routes and models', () => {
  it('an unknown route is 404 route_not_found in JSON', async () => {
    const response = await hearth.app.inject({ method: 'GET', url: '/v1/nope' });
    expectError(response, 404, 'route_not_found', null, '/v1/nope');
    const post = await hearth.app.inject({ method: 'POST', url: '/v1/completions/legacy', payload: {} });
    expectError(post, 404, 'route_not_found', null, 'POST');
  });

  it('GET /v1/models has the OpenAI list shape and lists tiny', async () => {
    const response = await hearth.app.inject({ method: 'GET', url: '/v1/models' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const list = response.json() as ModelList;
    expect(list.object).toBe('list');
    expect(Array.isArray(list.data)).toBe(true);
    for (const model of list.data) {
      expect(typeof model.id).toBe('string');
      expect(model.object).toBe('model');
      expect(typeof model.created).toBe('number');
      expect(typeof model.owned_by).toBe('string');
    }
    const tiny = list.data.find((model) => model.id === 'tiny');
    expect(tiny).toMatchObject({ id: 'tiny', object: 'model', source: 'local', owned_by: 'local' });
    expect(tiny!.size_bytes).toBeGreaterThan(0);
  });

  it('GET /v1/models/tiny returns that one model', async () => {
    const response = await hearth.app.inject({ method: 'GET', url: '/v1/models/tiny' });
    expect(response.statusCode).toBe(200);
    const model = response.json() as ModelRecord;
    expect(model).toMatchObject({ id: 'tiny', object: 'model', source: 'local' });
    expect(typeof model.created).toBe('number');
    expect(typeof model.owned_by).toBe('string');
  });

  it('GET /v1/models/<unknown> is 404 model_not_found', async () => {
    expectError(await hearth.app.inject({ method: 'GET', url: '/v1/models/missing-model' }), 404, 'model_not_found', 'model', 'missing-model');
  });
});

describe('/admin is loopback only', () => {
  it('refuses /admin/status from a non-loopback socket peer with 403', async () => {
    const response = await hearth.app.inject(asOwner({ method: 'GET', url: '/admin/status', remoteAddress: '203.0.113.9' }));
    expectError(response, 403, 'permission_denied', null, /loopback/);
  });

  it('refuses it even when forwarding headers claim loopback', async () => {
    const response = await hearth.app.inject(
      asOwner({
        method: 'GET',
        url: '/admin/status',
        remoteAddress: '203.0.113.9',
        headers: { 'x-forwarded-for': '127.0.0.1', 'x-real-ip': '127.0.0.1' },
      }),
    );
    expectError(response, 403, 'permission_denied', null);
  });

  it('allows /admin/status from 127.0.0.1', async () => {
    const response = await hearth.app.inject(asOwner({ method: 'GET', url: '/admin/status', remoteAddress: '127.0.0.1' }));
    expect(response.statusCode, response.body).toBe(200);
    const status = response.json() as { version: string; data_dir: string; loaded: unknown[]; providers: unknown[] };
    expect(status.version).toBe('test');
    expect(status.data_dir).toBe(hearth.services.paths.root);
    expect(Array.isArray(status.loaded)).toBe(true);
    expect(status.providers).toEqual([]);
  });
});
