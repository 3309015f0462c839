import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { AnthropicErrorBody, CountTokensResponse, Message } from '#shared/api/anthropic.js';
import type { ErrorBody } from '#shared/api/errors.js';
import { sharedApp } from '../../helpers/app.js';

const hearth = sharedApp();

const user = [{ role: 'user', content: 'Hello' }];
const weather = { name: 'get_weather', description: 'The weather in a city.', input_schema: { type: 'object', properties: { city: { type: 'string' } } } };

function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return hearth.app.inject({ method: 'POST', url, payload: body as object, headers });
}

const messages = (body: unknown) => post('/v1/messages', body);

/** Anthropic's error shape, exactly: `{type: 'error', error: {type, message}}`, with the status and what the message names. */
function expectAnthropicError(response: LightMyRequestResponse, status: number, type: string, mention?: string | RegExp): string {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = response.json() as AnthropicErrorBody;
  expect(Object.keys(body).sort()).toEqual(['error', 'type']);
  expect(body.type).toBe('error');
  expect(Object.keys(body.error).sort()).toEqual(['message', 'type']);
  expect(body.error.type).toBe(type);
  if (typeof mention === 'string') expect(body.error.message).toContain(mention);
  else if (mention) expect(body.error.message).toMatch(mention);
  return body.error.message;
}

const refused = async (body: unknown, mention: string | RegExp) => expectAnthropicError(await messages(body), 400, 'invalid_request_error', mention);

describe('POST /v1/messages refuses bad input in Anthropic’s error shape', () => {
  it('a missing max_tokens is 400 naming it', async () => {
    await refused({ model: 'tiny', messages: user }, 'max_tokens');
  });

  it('malformed JSON and a form body are refused in the same shape', async () => {
    const json = await hearth.app.inject({ method: 'POST', url: '/v1/messages', payload: '{"model": ', headers: { 'content-type': 'application/json' } });
    expectAnthropicError(json, 400, 'invalid_request_error', /JSON/);
    const form = await hearth.app.inject({
      method: 'POST',
      url: '/v1/messages',
      payload: 'a=b',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectAnthropicError(form, 415, 'invalid_request_error', 'application/json');
  });

  it('an unknown block type is 400 naming the block', async () => {
    const content = [
      { type: 'text', text: 'Read this' },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } },
    ];
    await refused({ model: 'tiny', max_tokens: 4, messages: [{ role: 'user', content }] }, 'messages[0].content[1].type "document"');
  });

  it('a tool_result for a tool_use id no assistant message holds is 400', async () => {
    const content = [{ type: 'tool_result', tool_use_id: 'toolu_nowhere', content: 'sunny' }];
    await refused({ model: 'tiny', max_tokens: 4, messages: [{ role: 'user', content }] }, 'toolu_nowhere');
  });

  it('an image whose bytes are no image, or a remote URL source, is 400 naming the block', async () => {
    const content = [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }];
    await refused(
      { model: 'tiny', max_tokens: 4, messages: [{ role: 'user', content }] },
      /messages\[0\]\.content\[0\]\.source\.data is not an image local models here can read/,
    );
    const remote = [{ type: 'image', source: { type: 'url', url: 'http://192.168.1.1/cat.png' } }];
    await refused({ model: 'tiny', max_tokens: 4, messages: [{ role: 'user', content: remote }] }, /messages\[0\]\.content\[0\]\.source\.url is a remote URL/);
  });

  it('a server tool is 400 naming it; tool_choice any without tools and a named tool not in tools are 400', async () => {
    await refused({ model: 'tiny', max_tokens: 4, messages: user, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'server tool');
    await refused({ model: 'tiny', max_tokens: 4, messages: user, tool_choice: { type: 'any' } }, 'tools is empty');
    await refused({ model: 'tiny', max_tokens: 4, messages: user, tools: [weather], tool_choice: { type: 'tool', name: 'nope' } }, '"nope"');
  });

  it('a thinking block in a user message is 400; thinking enabled without budget_tokens is 400', async () => {
    await refused({ model: 'tiny', max_tokens: 4, messages: [{ role: 'user', content: [{ type: 'thinking', thinking: 'hm', signature: 's' }] }] }, 'thinking');
    await refused({ model: 'tiny', max_tokens: 4, messages: user, thinking: { type: 'enabled' } }, 'budget_tokens');
  });

  it('an unknown model is 404 not_found_error listing the models and the Claude Code settings', async () => {
    const message = expectAnthropicError(await messages({ model: 'claude-sonnet-4-6', max_tokens: 4, messages: user }), 404, 'not_found_error');
    expect(message).toContain('tiny');
    expect(message).toContain('ANTHROPIC_MODEL');
    expect(message).toContain('ANTHROPIC_DEFAULT_HAIKU_MODEL');
    expect(message).toContain('ANTHROPIC_BASE_URL');
  });

  it('a prompt longer than the context is 400 in the words Claude Code reads to compact ("prompt is too long: N tokens > M maximum")', async () => {
    const long = [{ role: 'user', content: 'word '.repeat(20_000) }];
    const message = await refused({ model: 'tiny', max_tokens: 4, messages: long }, /^prompt is too long: \d+ tokens > \d+ maximum\. /);
    const [, used, maximum] = /(\d+) tokens > (\d+)/.exec(message)!;
    expect(Number(used)).toBeGreaterThan(Number(maximum));
  });

  it('other families keep the OpenAI shape', async () => {
    const response = await post('/v1/chat/completions', { model: 'claude-sonnet-4-6', messages: user });
    expect(response.statusCode).toBe(404);
    expect((response.json() as ErrorBody).error.code).toBe('model_not_found');
  });
});

describe('POST /v1/messages on a local model', () => {
  it('accepts what Claude Code sends (?beta=true, system blocks with cache_control, thinking, metadata, fields it does not read) and answers a Message', async () => {
    const response = await post('/v1/messages?beta=true', {
      model: 'tiny',
      max_tokens: 4,
      system: [
        { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.0.abc; cc_entrypoint=cli; cch=12345;' },
        { type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } },
      ],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral', ttl: '1h' } }] }],
      thinking: { type: 'enabled', budget_tokens: 1024 },
      metadata: { user_id: 'user_abc_session_1' },
      temperature: 1,
      top_p: 0.95,
      top_k: 40,
      stop_sequences: ['\n\nHuman:'],
      context_management: { edits: [] },
      output_config: { effort: 'high' },
    });
    expect(response.statusCode, response.body).toBe(200);
    const message = response.json() as Message;
    expect(message.id).toMatch(/^msg_/);
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: 'tiny', stop_sequence: null });
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage.output_tokens).toBe(4);
    expect(message.usage.input_tokens + message.usage.cache_read_input_tokens).toBeGreaterThan(0);
    expect(message.usage.cache_creation_input_tokens).toBe(0);
  });
});

describe('what Claude Code 2.1 sends', () => {
  // Captured from claude-cli 2.1.332 (trimmed): a system message inside messages, adaptive thinking
  // with display omitted, tools whose schemas use allOf of patterns and a maxLength of 524288, a
  // deferred tool, and fields Hearth does not read.
  const request = {
    model: 'tiny',
    max_tokens: 2,
    system: [
      { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.332.18b; cc_entrypoint=sdk-cli;' },
      { type: 'text', text: 'You are a Claude agent.', cache_control: { type: 'ephemeral' } },
    ],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: '<system-reminder>Be careful.</system-reminder>' },
          { type: 'text', text: 'hi' },
        ],
      },
      { role: 'system', content: [{ type: 'text', text: '# Environment\nPlatform: linux', cache_control: { type: 'ephemeral' } }] },
    ],
    tools: [
      {
        name: 'SendMessage',
        description: 'Send a message.',
        input_schema: {
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          properties: { to: { type: 'string', allOf: [{ pattern: '^[^\\n\\r]*$' }, { pattern: '^[\\s\\S]{0,300}$' }] } },
          required: ['to'],
          additionalProperties: false,
        },
      },
      { name: 'Workflow', description: 'Run a script.', input_schema: { type: 'object', properties: { script: { type: 'string', maxLength: 524288 } } } },
      { name: 'DeferredToolPlaceholder', description: 'Placeholder.', input_schema: { type: 'object', properties: {} }, defer_loading: true },
    ],
    metadata: { user_id: JSON.stringify({ device_id: 'd'.repeat(64), account_uuid: '', session_id: '50693143-7260-458f-b141-e6e20647a984' }) },
    thinking: { type: 'adaptive', display: 'omitted' },
    context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
    output_config: { effort: 'high' },
    stream: false,
  };

  it('is answered, and counted', async () => {
    const response = await post('/v1/messages?beta=true', request, { 'anthropic-beta': 'claude-code-20250219,advanced-tool-use-2025-11-20' });
    expect(response.statusCode, response.body).toBe(200);
    expect((response.json() as Message).usage.output_tokens).toBe(2);
    const { max_tokens: _max, stream: _stream, ...counted } = request;
    const count = await post('/v1/messages/count_tokens?beta=true', counted);
    expect(count.statusCode, count.body).toBe(200);
    // The system message in the conversation is part of the prompt.
    const without = await post('/v1/messages/count_tokens?beta=true', { ...counted, messages: counted.messages.slice(0, 1) });
    expect((count.json() as CountTokensResponse).input_tokens).toBeGreaterThan((without.json() as CountTokensResponse).input_tokens);
  });
});

describe('POST /v1/messages/count_tokens', () => {
  const count = async (body: unknown, url = '/v1/messages/count_tokens') => {
    const response = await post(url, body);
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as CountTokensResponse).input_tokens;
  };

  it('counts the prompt with the model’s template: more words, system and tools each count', async () => {
    const plain = await count({ model: 'tiny', messages: user });
    expect(plain).toBeGreaterThan(0);
    expect(await count({ model: 'tiny', messages: [{ role: 'user', content: 'Hello there, how is the weather today?' }] })).toBeGreaterThan(plain);
    expect(await count({ model: 'tiny', messages: user, system: 'You are terse.' })).toBeGreaterThan(plain);
    expect(await count({ model: 'tiny', messages: user, tools: [weather] }, '/v1/messages/count_tokens?beta=true')).toBeGreaterThan(plain);
  });

  it('leaves out Claude Code’s per-request stamp: two stamps count the same as none', async () => {
    const stamped = (cch: string) => ({
      model: 'tiny',
      messages: user,
      system: [
        { type: 'text', text: `x-anthropic-billing-header: cc_version=2.1.37.${cch.slice(0, 3)}; cc_entrypoint=cli; cch=${cch};` },
        { type: 'text', text: 'You are Claude Code.' },
      ],
    });
    const first = await count(stamped('fa690'));
    expect(await count(stamped('0aaa9'))).toBe(first);
    expect(await count({ model: 'tiny', messages: user, system: 'You are Claude Code.' })).toBe(first);
  });

  it('refuses an unknown model (404) and bad input (400) in Anthropic’s shape', async () => {
    expectAnthropicError(await post('/v1/messages/count_tokens', { model: 'claude-haiku-4-6', messages: user }), 404, 'not_found_error', 'ANTHROPIC_MODEL');
    expectAnthropicError(await post('/v1/messages/count_tokens', { model: 'tiny' }), 400, 'invalid_request_error', 'messages');
  });
});
