import { readFile } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OllamaChatChunk, OllamaModelList, OllamaProgress } from '#shared/api/ollama.js';
import { ollamaCapabilities } from '../../../companion/src/routes/ollama/details.js';
import { historyOf, outputOf, thinkingOf } from '../../../companion/src/routes/ollama/convert.js';
import { keepAliveOf } from '../../../companion/src/routes/ollama/keep-alive.js';
import { ollamaName, pullSource } from '../../../companion/src/routes/ollama/names.js';
import { startHubFixture, type HubFixture } from '../../fixtures/hub/server.js';
import { startScriptedProvider, type ScriptedProvider } from '../../fixtures/scripted-provider.js';
import { testApp, type TestApp } from '../../helpers/app.js';
import { startMockProvider, type MockProvider } from '../../helpers/mock-provider.js';
import { tinyModelPath } from '../../helpers/models.js';
import { newDataDir } from '../../helpers/server.js';

/*
 * Ollama's API in process: how its requests become the neutral request (names, tool calls,
 * keep_alive, think, format), a provider's model reached by conversion, and a pull from a local
 * hub that speaks the Hugging Face API. tests/e2e/ollama*.test.ts run the official client.
 */

describe('names', () => {
  it('lists an id as name:latest, unless its last part has a tag', () => {
    expect(ollamaName('tiny')).toBe('tiny:latest');
    expect(ollamaName('qwen3:8b')).toBe('qwen3:8b');
    expect(ollamaName('mock/gpt-4o')).toBe('mock/gpt-4o:latest');
  });

  it("reads an hf.co name as the downloader's source, and no other name", () => {
    expect(pullSource('hf.co/bartowski/Qwen2.5-7B-Instruct-GGUF:q4_k_m')).toBe('bartowski/Qwen2.5-7B-Instruct-GGUF:Q4_K_M');
    expect(pullSource('huggingface.co/owner/repo')).toBe('owner/repo');
    expect(pullSource('hf.co/owner/repo:latest')).toBe('owner/repo');
    expect(pullSource('llama3.2')).toBeNull();
    expect(pullSource('library/llama3:8b')).toBeNull();
  });
});

describe('what a request asks', () => {
  it('maps capabilities onto Ollama words', () => {
    expect(ollamaCapabilities(['chat', 'completion', 'fim', 'tools', 'reasoning', 'vision', 'audio'])).toEqual([
      'completion',
      'insert',
      'tools',
      'thinking',
      'vision',
    ]);
    expect(ollamaCapabilities(['embedding'])).toEqual(['embedding']);
  });

  it('reads keep_alive 0 however it is written as an unload, any other duration as keep, and refuses words', () => {
    for (const zero of [0, '0', '0s', '0m0s', '0.0h']) expect(keepAliveOf(zero)).toBe('unload');
    for (const keep of [undefined, 300, -1, '5m', '1h30m', '-1s', '10']) expect(keepAliveOf(keep)).toBe('keep');
    expect(() => keepAliveOf('forever')).toThrow(/keep_alive "forever" is not a duration/);
  });

  it('gives tool calls ids and answers each tool message to its call: by id, else by tool name, else in order', () => {
    const history = historyOf([
      { role: 'user', content: 'Weather and time?' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ function: { name: 'weather', arguments: { city: 'Oslo' } } }, { function: { name: 'time', arguments: {} } }],
      },
      { role: 'tool', content: '12:00', tool_name: 'time' },
      { role: 'tool', content: 'Sunny', tool_name: 'weather' },
    ]);
    expect(history[1]).toEqual({
      role: 'assistant',
      text: '',
      toolCalls: [
        { id: 'call_1_0', name: 'weather', arguments: '{"city":"Oslo"}' },
        { id: 'call_1_1', name: 'time', arguments: '{}' },
      ],
    });
    expect(history[2]).toEqual({ role: 'tool', callId: 'call_1_1', output: '12:00' });
    expect(history[3]).toEqual({ role: 'tool', callId: 'call_1_0', output: 'Sunny' });
    const byId = historyOf([
      { role: 'assistant', content: '', tool_calls: [{ id: 'c9', function: { name: 'f', arguments: {} } }] },
      { role: 'tool', content: 'x', tool_call_id: 'c9' },
    ]);
    expect(byId[1]).toEqual({ role: 'tool', callId: 'c9', output: 'x' });
  });

  it('reads format and think', () => {
    expect(outputOf(undefined)).toEqual({ type: 'text' });
    expect(outputOf('')).toEqual({ type: 'text' });
    expect(outputOf('json')).toEqual({ type: 'json' });
    expect(outputOf({ type: 'object' })).toEqual({ type: 'json', schema: { type: 'object' } });
    expect(thinkingOf(undefined, 100)).toBeUndefined();
    expect(thinkingOf(false, 100)).toEqual({ enabled: false });
    expect(thinkingOf(true, 100)).toEqual({ enabled: true });
    expect(thinkingOf('low', 100)).toEqual({ enabled: true, budgetTokens: 25 });
    expect(thinkingOf('high', 100)).toEqual({ enabled: true });
  });
});

describe('in the app', () => {
  let mock: MockProvider;
  let hub: HubFixture;
  let scripted: ScriptedProvider;
  let test: TestApp;

  beforeAll(async () => {
    mock = await startMockProvider({ models: ['mock-small'], reply: 'Hello from the provider' });
    hub = await startHubFixture([
      { id: 'hearth-test/Tiny-Chat-GGUF', downloads: 1, likes: 1, files: { 'tiny-chat-Q4_K_M.gguf': await readFile(await tinyModelPath()) } },
    ]);
    process.env.HF_ENDPOINT = hub.url;
    scripted = await startScriptedProvider({ models: ['caller'] });
    const dataDir = await newDataDir(true);
    writeFileSync(
      join(dataDir, 'config.yaml'),
      [
        'version: 1',
        'models:',
        '  threads: 1',
        '  context_size: 512',
        'providers:',
        '  - name: mock',
        `    base_url: ${mock.baseUrl}`,
        '  - name: scripted',
        `    base_url: ${scripted.baseUrl}`,
        '',
      ].join('\n'),
    );
    test = await testApp({ dataDir });
  });

  afterAll(async () => {
    await test?.close();
    await hub?.close();
    await mock?.close();
    await scripted?.close();
    delete process.env.HF_ENDPOINT;
  });

  const post = (url: string, payload: object, remoteAddress = '127.0.0.1') => test.app.inject({ method: 'POST', url, payload, remoteAddress });
  const lines = <T>(body: string) =>
    body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as T);

  it("lists the provider's models beside the local ones", async () => {
    const list = (await test.app.inject({ method: 'GET', url: '/api/tags' })).json() as OllamaModelList;
    expect(list.models.map((model) => model.name)).toEqual(expect.arrayContaining(['tiny:latest', 'mock/mock-small:latest']));
  });

  it("chats with a provider's model by conversion: Ollama's tools and tool calls reach it in the chat-completions shape", async () => {
    const response = await post('/api/chat', {
      model: 'mock/mock-small:latest',
      stream: false,
      format: { type: 'object', properties: { city: { type: 'string' } } },
      options: { temperature: 0.2, num_predict: 20, stop: ['END'] },
      tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }],
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: '', tool_calls: [{ function: { name: 'weather', arguments: { city: 'Oslo' } } }] },
        { role: 'tool', content: 'Sunny', tool_name: 'weather' },
      ],
    });
    expect(response.statusCode, response.body).toBe(200);
    const answer = response.json() as OllamaChatChunk;
    expect(answer).toMatchObject({
      model: 'mock/mock-small:latest',
      done: true,
      done_reason: 'stop',
      message: { role: 'assistant', content: 'Hello from the provider' },
    });
    const sent = mock.requests.at(-1)!.body as Record<string, unknown>;
    expect(sent).toMatchObject({
      model: 'mock-small',
      temperature: 0.2,
      max_tokens: 20,
      stop: ['END'],
      tools: [{ type: 'function', function: { name: 'weather' } }],
      response_format: { type: 'json_schema' },
    });
    const messages = sent.messages as { role: string; tool_calls?: { id: string; function: { arguments: string } }[]; tool_call_id?: string }[];
    expect(messages[1]!.tool_calls![0]!.function.arguments).toBe('{"city":"Oslo"}');
    expect(messages[2]!.tool_call_id).toBe(messages[1]!.tool_calls![0]!.id);
  });

  it("answers a model's tool calls in Ollama's shape (arguments as an object), streamed and not", async () => {
    const call = { name: 'weather', arguments: { city: 'Oslo', days: 2 }, id: 'call_w' };
    scripted.setScript(() => ({ tool_calls: [call] }));
    const body = {
      model: 'scripted/caller',
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }],
    };
    const whole = (await post('/api/chat', { ...body, stream: false })).json() as OllamaChatChunk;
    expect(whole).toMatchObject({ done: true, done_reason: 'stop', message: { role: 'assistant', content: '' } });
    expect(whole.message.tool_calls).toEqual([{ id: 'call_w', function: { index: 0, name: 'weather', arguments: { city: 'Oslo', days: 2 } } }]);
    const parts = lines<OllamaChatChunk>((await post('/api/chat', body)).body);
    const calls = parts.filter((part) => part.message.tool_calls);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.done).toBe(false);
    expect(calls[0]!.message.tool_calls![0]!.function.arguments).toEqual({ city: 'Oslo', days: 2 });
    expect(parts.at(-1)).toMatchObject({ done: true, done_reason: 'stop' });
  });

  it("streams a provider's answer as NDJSON", async () => {
    const response = await post('/api/chat', { model: 'mock/mock-small', messages: [{ role: 'user', content: 'Hi' }] });
    expect(response.headers['content-type']).toMatch(/application\/x-ndjson/);
    const parts = lines<OllamaChatChunk>(response.body);
    expect(parts.map((part) => part.message.content).join('')).toBe('Hello from the provider');
    expect(parts.at(-1)).toMatchObject({ done: true, done_reason: 'stop' });
  });

  it('refuses a raw prompt or a suffix for a provider model', async () => {
    const response = await post('/api/generate', { model: 'mock/mock-small', prompt: 'x', raw: true, stream: false });
    expect(response.statusCode).toBe(400);
    expect(Object.keys(response.json() as object)).toEqual(['error']);
  });

  it('pulls an hf.co name with Ollama progress lines, and the name then resolves to the downloaded model', async () => {
    const name = 'hf.co/hearth-test/Tiny-Chat-GGUF:Q4_K_M';
    const response = await post('/api/pull', { model: name });
    expect(response.statusCode).toBe(200);
    const progress = lines<OllamaProgress>(response.body);
    expect(progress[0]).toEqual({ status: 'pulling manifest' });
    expect(progress.some((line) => line.digest?.startsWith('sha256:') && (line.total ?? 0) > 0)).toBe(true);
    expect(progress.at(-1)).toEqual({ status: 'success' });
    const chat = await post('/api/chat', { model: name, stream: false, messages: [{ role: 'user', content: 'Hi' }], options: { num_predict: 2 } });
    expect(chat.statusCode).toBe(200);
    expect((chat.json() as OllamaChatChunk).eval_count).toBe(2);
    // Pulled again: already here.
    expect((await post('/api/pull', { model: name, stream: false })).json()).toEqual({ status: 'success' });
  });

  it("refuses a pull from another machine: downloading fills this machine's disk", async () => {
    const response = await post('/api/pull', { model: 'hf.co/hearth-test/Other-GGUF:Q4_K_M' }, '192.168.1.20');
    expect(response.statusCode).toBe(403);
    expect((response.json() as { error: string }).error).toMatch(/only at the request of the machine Hearth runs on/);
  });
});
