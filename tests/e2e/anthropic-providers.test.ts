/**
 * The Messages API on a provider's model (`<provider>/<model>`): the one generation path sends
 * it to the provider as a chat-completions request and converts the answer back, streamed or not.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { startMockProvider } from '../helpers/mock-provider.js';
import { perFile } from '../helpers/per-file.js';
import { rejectionOf } from '../helpers/rejection.js';
import { newDataDir, startServer } from '../helpers/server.js';

const REPLY = 'Hello from the provider.';

const hearth = perFile(
  'A server with a mock provider',
  async () => {
    const mock = await startMockProvider({ models: ['mock-small'], reply: REPLY });
    const dataDir = await newDataDir(false);
    writeFileSync(join(dataDir, 'config.yaml'), ['version: 1', 'providers:', '  - name: mock', `    base_url: ${mock.baseUrl}`, ''].join('\n'));
    const server = await startServer({ dataDir });
    return { mock, server, client: new Anthropic({ baseURL: server.url, apiKey: 'unused', maxRetries: 0 }) };
  },
  async ({ server, mock }) => {
    expect(await server.stop()).toBe(0);
    await mock.close();
  },
);

/** The chat-completions bodies the provider received since `before`. */
const sent = (before: number) =>
  hearth.value.mock.requests
    .slice(before)
    .filter((request) => request.path === '/v1/chat/completions')
    .map((request) => request.body as Record<string, unknown>);

describe('a provider model through /v1/messages', () => {
  it('answers a Message with the provider’s text; the provider gets system, messages and max_tokens as chat completions, without Claude Code’s stamp', async () => {
    const before = hearth.value.mock.requests.length;
    const message = await hearth.value.client.messages.create({
      model: 'mock/mock-small',
      max_tokens: 50,
      system: [
        { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.37.0d9; cc_entrypoint=cli; cch=fa690;' },
        { type: 'text', text: 'Be brief.' },
      ],
      messages: [{ role: 'user', content: 'Hi' }],
      metadata: { user_id: 'session-1' },
    });
    expect(message).toMatchObject({ model: 'mock/mock-small', stop_reason: 'end_turn', content: [{ type: 'text', text: REPLY }] });
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    const [body] = sent(before);
    expect(body).toMatchObject({
      model: 'mock-small',
      max_tokens: 50,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
    });
  });

  it('streams it as Anthropic’s events, and a named tool_choice reaches the provider as a named function', async () => {
    const before = hearth.value.mock.requests.length;
    const stream = hearth.value.client.messages.stream({
      model: 'mock/mock-small',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      tool_choice: { type: 'tool', name: 'get_weather' },
    });
    let streamed = '';
    stream.on('text', (text) => (streamed += text));
    const message = await stream.finalMessage();
    expect(streamed).toBe(REPLY);
    expect(message.content).toEqual([{ type: 'text', text: REPLY, citations: null }]);
    const [body] = sent(before);
    expect(body!.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(body!.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    ]);
  });

  it('a thinking budget reaches the provider as the reasoning effort whose budget covers it; thinking off sends none', async () => {
    const before = hearth.value.mock.requests.length;
    const ask = { model: 'mock/mock-small', max_tokens: 4096, messages: [{ role: 'user' as const, content: 'Hi' }] };
    await hearth.value.client.messages.create({ ...ask, thinking: { type: 'enabled', budget_tokens: 1024 } });
    await hearth.value.client.messages.create({ ...ask, thinking: { type: 'enabled', budget_tokens: 2000 } });
    await hearth.value.client.messages.create({ ...ask, thinking: { type: 'disabled' } });
    const [low, medium, off] = sent(before);
    expect(low!.reasoning_effort).toBe('low');
    expect(medium!.reasoning_effort).toBe('medium');
    expect(off).not.toHaveProperty('reasoning_effort');
  });

  it('count_tokens is 400: counting needs a local model', async () => {
    const error = await rejectionOf(hearth.value.client.messages.countTokens({ model: 'mock/mock-small', messages: [{ role: 'user', content: 'Hi' }] }));
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).message).toContain('counting needs a local model');
  });
});
