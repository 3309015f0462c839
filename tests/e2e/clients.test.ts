import { writeFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, jsonSchema, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerStatus } from '#shared/api/admin.js';
import type { ModelList } from '#shared/api/openai.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';
import { rejectedWith } from '../helpers/rejection.js';
import { newDataDir, startServer, type RunningServer } from '../helpers/server.js';

describe('the Vercel AI SDK (@ai-sdk/openai-compatible v1, ai v5) against a real server', () => {
  let server: RunningServer;
  let hearth: ReturnType<typeof createOpenAICompatible>;

  beforeAll(async () => {
    server = await startServer();
    hearth = createOpenAICompatible({ name: 'hearth', baseURL: `${server.url}/v1`, includeUsage: true });
  });

  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  it('generateText returns text, usage and the finish reason', async () => {
    const result = await generateText({ model: hearth('tiny'), prompt: 'Say hello.', maxOutputTokens: 8, seed: 3, maxRetries: 0 });
    expect(result.text.length).toBeGreaterThan(0);
    expect(result.finishReason).toBe('length');
    expect(result.usage.outputTokens).toBe(8);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(result.usage.totalTokens).toBe(result.usage.inputTokens! + 8);
    expect(result.response.modelId).toBe('tiny');
    expect(result.response.id).toMatch(/^chatcmpl-/);
  });

  it('generateText with a system prompt and a conversation', async () => {
    const result = await generateText({
      model: hearth('tiny'),
      system: 'You are terse.',
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello.' },
        { role: 'user', content: [{ type: 'text', text: 'And again?' }] },
      ],
      maxOutputTokens: 4,
      temperature: 0,
      maxRetries: 0,
    });
    expect(result.usage.outputTokens).toBe(4);
    expect(result.text.length).toBeGreaterThan(0);
  });

  it('streamText streams text deltas and reports usage', async () => {
    const errors: unknown[] = [];
    const result = streamText({
      model: hearth('tiny'),
      prompt: 'Stream a little.',
      maxOutputTokens: 12,
      seed: 5,
      maxRetries: 0,
      onError: ({ error }) => void errors.push(error),
    });
    let text = '';
    let deltas = 0;
    for await (const delta of result.textStream) {
      text += delta;
      deltas++;
    }
    expect(errors).toEqual([]);
    expect(deltas).toBeGreaterThan(1);
    expect(text).toBe(await result.text);
    expect(text.length).toBeGreaterThan(0);
    expect(await result.finishReason).toBe('length');
    const usage = await result.usage;
    expect(usage.outputTokens).toBe(12);
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect((await result.response).modelId).toBe('tiny');
  });

  it('streamText and generateText agree for the same seed', async () => {
    const options = { model: hearth('tiny'), prompt: 'Same seed', maxOutputTokens: 10, seed: 42, temperature: 1, maxRetries: 0 } as const;
    const generated = await generateText(options);
    const streamed = streamText(options);
    expect(await streamed.text).toBe(generated.text);
  });

  it('a forced tool call comes back as an AI SDK tool call', async () => {
    const result = await generateText({
      model: hearth('tiny'),
      prompt: 'What is the weather in Paris?',
      tools: {
        weather: tool({
          description: 'Weather for a city',
          inputSchema: jsonSchema<{ city: 'Paris' | 'Rome' }>({
            type: 'object',
            properties: { city: { type: 'string', enum: ['Paris', 'Rome'] } },
            required: ['city'],
            additionalProperties: false,
          }),
        }),
      },
      toolChoice: { type: 'tool', toolName: 'weather' },
      maxOutputTokens: 200,
      seed: 1,
      maxRetries: 0,
    });
    expect(result.finishReason).toBe('tool-calls');
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0]!.toolName).toBe('weather');
    expect(['Paris', 'Rome']).toContain((result.toolCalls[0]!.input as { city: string }).city);
  });

  it('an unknown model surfaces as an APICallError with status 404', async () => {
    const error = await generateText({ model: hearth('nope'), prompt: 'Hi', maxOutputTokens: 2, maxRetries: 0 }).then(
      () => undefined,
      (caught: unknown) => caught as { statusCode?: number; responseBody?: string },
    );
    expect(error?.statusCode).toBe(404);
    expect(JSON.parse(error!.responseBody!)).toMatchObject({ error: { code: 'model_not_found', param: 'model' } });
  });
});

describe('a model provider end to end (mock provider behind a real server)', () => {
  const KEY = 'sk-mock-7d1e0c9b2a4f4e35b6c8d9e0f1a2b3c4';
  const WRONG_KEY = 'sk-wrong-0f9e8d7c6b5a49382716aabbccddeeff';
  const REPLY = 'Hello from the mock provider, streamed word by word.';
  let mock: MockProvider;
  let server: RunningServer;
  let client: OpenAI;

  const chatRequests = () => mock.requests.filter((request) => request.path === '/v1/chat/completions');

  beforeAll(async () => {
    mock = await startMockProvider({ token: KEY, models: ['mock-small', 'mock-large'], reply: REPLY });
    const dataDir = await newDataDir(true);
    writeFileSync(
      join(dataDir, 'config.yaml'),
      [
        'version: 1',
        'providers:',
        '  - name: mock',
        `    base_url: ${mock.baseUrl}`,
        '    api_key: "secret:MOCK_KEY"',
        '  - name: wrongkey',
        `    base_url: ${mock.baseUrl}`,
        '    api_key: "secret:WRONG_KEY"',
        '',
      ].join('\n'),
    );
    writeFileSync(join(dataDir, 'secrets.json'), JSON.stringify({ MOCK_KEY: KEY, WRONG_KEY }), { mode: 0o600 });
    expect(statSync(join(dataDir, 'secrets.json')).mode & 0o777).toBe(0o600);
    // Verbose logs, so a leak of the key into them would show.
    server = await startServer({ dataDir, env: { HEARTH_LOG_LEVEL: 'debug' } });
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'not-needed', maxRetries: 0 });
  });

  afterAll(async () => {
    await server?.stop();
    await mock?.close();
  });

  it('/v1/models lists the provider models as mock/<model> next to the local ones', async () => {
    const list = (await (await fetch(`${server.url}/v1/models`)).json()) as ModelList;
    const ids = list.data.map((model) => model.id);
    expect(ids).toEqual(expect.arrayContaining(['tiny', 'mock/mock-small', 'mock/mock-large']));
    expect(ids.filter((id) => id.startsWith('wrongkey/'))).toEqual([]);
    // A provider's model says source "provider" (companions before it said "remote"); a local one "local".
    expect(list.data.find((model) => model.id === 'mock/mock-small')).toMatchObject({ object: 'model', source: 'provider', owned_by: 'mock-org' });
    expect(list.data.find((model) => model.id === 'tiny')).toMatchObject({ source: 'local' });
    expect(list.data.map((model) => model.source)).not.toContain('remote');
    const listing = mock.requests.find(
      (request) => request.method === 'GET' && request.path === '/v1/models' && request.headers.authorization === `Bearer ${KEY}`,
    );
    expect(listing).toBeDefined();
    const single = await fetch(`${server.url}/v1/models/mock/mock-small`);
    expect(single.status).toBe(200);
    expect(await single.json()).toMatchObject({ id: 'mock/mock-small', object: 'model', source: 'provider' });
  });

  it('a chat completion through mock/<model> reaches the provider with its key and its own model name', async () => {
    const before = chatRequests().length;
    const completion = await client.chat.completions.create({ model: 'mock/mock-small', messages: [{ role: 'user', content: 'Hi there' }], max_tokens: 5 });
    expect(completion.model).toBe('mock/mock-small');
    expect(completion.choices[0]!.message.content).toBe(REPLY);
    expect(completion.usage!.total_tokens).toBeGreaterThan(0);
    const seen = chatRequests().slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(seen[0]!.body.model).toBe('mock-small');
    expect(seen[0]!.body.messages).toEqual([{ role: 'user', content: 'Hi there' }]);
    expect(seen[0]!.body.max_tokens).toBe(5);
  });

  it('a streamed chat completion through mock/<model> comes back chunk by chunk with the Hearth model id', async () => {
    const before = chatRequests().length;
    const stream = await client.chat.completions.create({
      model: 'mock/mock-large',
      messages: [{ role: 'user', content: 'Stream please' }],
      max_tokens: 20,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let chunks = 0;
    const models = new Set<string>();
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      chunks++;
      models.add(chunk.model);
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(REPLY);
    expect(chunks).toBeGreaterThan(REPLY.split(' ').length);
    expect([...models]).toEqual(['mock/mock-large']);
    expect(finish).toBe('stop');
    expect(usage?.total_tokens).toBeGreaterThan(0);
    const seen = chatRequests().slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(seen[0]!.body).toMatchObject({ model: 'mock-large', stream: true });
  });

  it('the AI SDK streams through the provider too', async () => {
    const hearth = createOpenAICompatible({ name: 'hearth', baseURL: `${server.url}/v1`, includeUsage: true });
    const result = streamText({ model: hearth('mock/mock-small'), prompt: 'Hi', maxOutputTokens: 10, maxRetries: 0 });
    expect(await result.text).toBe(REPLY);
    expect((await result.response).modelId).toBe('mock/mock-small');
  });

  it('a bare model id only the provider has is 404 model_not_found and never reaches the provider', async () => {
    const before = chatRequests().length;
    const apiError = await rejectedWith(
      client.chat.completions.create({ model: 'mock-small', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 5 }),
      OpenAI.APIError,
    );
    expect(apiError.status).toBe(404);
    expect(apiError.code).toBe('model_not_found');
    expect(apiError.param).toBe('model');
    const streamed = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-large', stream: true, max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(streamed.status).toBe(404);
    expect(chatRequests().length).toBe(before);
  });

  it("an unknown model of a known provider is the provider's 404, with the Hearth id", async () => {
    const error = await client.chat.completions.create({ model: 'mock/not-there', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 5 }).then(
      () => undefined,
      (caught: unknown) => caught as InstanceType<typeof OpenAI.APIError>,
    );
    expect(error?.status).toBe(404);
    expect(error?.code).toBe('model_not_found');
  });

  it('a provider whose key the upstream refuses is reported without the key', async () => {
    await fetch(`${server.url}/v1/models`); // lists the providers (also when this test runs alone)
    const status = (await (await fetch(`${server.url}/admin/status`)).json()) as ServerStatus;
    const wrong = status.providers.find((provider) => provider.name === 'wrongkey');
    expect(wrong?.ok).toBe(false);
    const mockStatus = status.providers.find((provider) => provider.name === 'mock');
    expect(mockStatus).toMatchObject({ ok: true, models: 2 });
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'wrongkey/mock-small', max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    const text = await response.text();
    const statusText = JSON.stringify(status);
    for (const secret of [KEY, WRONG_KEY]) {
      expect(text).not.toContain(secret);
      expect(statusText).not.toContain(secret);
    }
  });

  it("the keys' values never appear in the server's stdout or stderr", async () => {
    // Make sure the server logged something at all, so the check below is not vacuous.
    expect(server.stderr().length).toBeGreaterThan(0);
    for (const secret of [KEY, WRONG_KEY]) {
      expect(server.stdout()).not.toContain(secret);
      expect(server.stderr()).not.toContain(secret);
      // Nor a recognisable piece of it.
      expect(server.stderr()).not.toContain(secret.slice(3, 19));
    }
    expect(await server.stop()).toBe(0);
    for (const secret of [KEY, WRONG_KEY]) {
      expect(server.stdout()).not.toContain(secret);
      expect(server.stderr()).not.toContain(secret);
    }
  });
});
