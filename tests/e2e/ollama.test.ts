import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ollama, type ChatResponse, type GenerateResponse } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OllamaChatChunk, OllamaGenerateChunk, OllamaModelList, OllamaRunningList } from '#shared/api/ollama.js';
import { tinyEmbeddingModelPath, tinyFimModelPath, tinyThinkingModelPath } from '../helpers/models.js';
import { newDataDir, send, startServer, type RunningServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

/*
 * Ollama's API on a real server, through the official `ollama` client: what apps with an
 * "Ollama" provider (Open WebUI, Continue, Zed, n8n, Home Assistant) call.
 */

// The wire types are what the official client reads.
const chunkMatchesClient = (chunk: OllamaChatChunk): Omit<ChatResponse, 'created_at'> => chunk as unknown as ChatResponse;
const generateMatchesClient = (chunk: OllamaGenerateChunk): Omit<GenerateResponse, 'created_at'> => chunk as unknown as GenerateResponse;
void chunkMatchesClient;
void generateMatchesClient;

let server: RunningServer;
let ollama: Ollama;

beforeAll(async () => {
  const dataDir = await newDataDir(true);
  copyFileSync(await tinyEmbeddingModelPath(), join(dataDir, 'models', 'tiny-embed.gguf'));
  copyFileSync(await tinyFimModelPath(), join(dataDir, 'models', 'tiny-fim.gguf'));
  copyFileSync(await tinyThinkingModelPath(), join(dataDir, 'models', 'thinker.gguf'));
  writeFileSync(join(dataDir, 'config.yaml'), ['version: 1', 'models:', '  threads: 1', '  context_size: 1024', ''].join('\n'));
  server = await startServer({ dataDir });
  ollama = new Ollama({ host: server.url });
});

afterAll(async () => {
  expect(await server.stop()).toBe(0);
});

/** The error an `ollama` call fails with: Ollama's ResponseError carries the message and the status. */
async function failure(promise: Promise<unknown>): Promise<{ error: string; status_code: number }> {
  const caught = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(caught).toBeInstanceOf(Error);
  return caught as { error: string; status_code: number };
}

describe('the model routes', () => {
  it('reports a version the clients accept', async () => {
    const { version } = await ollama.version();
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('lists the local models as name:tag with their details', async () => {
    const { models } = await ollama.list();
    const tiny = models.find((model) => model.name === 'tiny:latest');
    expect(tiny).toMatchObject({ model: 'tiny:latest', details: { format: 'gguf', family: 'llama' } });
    expect(tiny?.size).toBeGreaterThan(0);
    expect(tiny?.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(Number.isNaN(new Date(tiny!.modified_at).getTime())).toBe(false);
    expect(models.map((model) => model.name)).toContain('tiny-embed:latest');
  });

  it('shows a model with its architecture, context length and capabilities in Ollama words', async () => {
    const shown = await ollama.show({ model: 'tiny' });
    const info = shown.model_info as unknown as Record<string, unknown>;
    expect(info['general.architecture']).toBe('llama');
    expect(info['llama.context_length']).toBeGreaterThan(0);
    expect(shown.capabilities).toEqual(expect.arrayContaining(['completion', 'tools']));
    expect(shown.capabilities).not.toContain('embedding');
    expect((await ollama.show({ model: 'tiny-embed:latest' })).capabilities).toEqual(['embedding']);
  });

  it('answers show for the older {name} body too', async () => {
    const response = await send(server, '/api/show', { body: { name: 'tiny:latest' } });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { details: { format: string } }).details.format).toBe('gguf');
  });
});

describe('chat', () => {
  it('streams NDJSON lines, the last with done and the figures', async () => {
    const stream = await ollama.chat({ model: 'tiny', messages: [{ role: 'user', content: 'Hello' }], stream: true, options: { num_predict: 6, seed: 1 } });
    const parts: ChatResponse[] = [];
    for await (const part of stream) parts.push(part);
    const last = parts.at(-1)!;
    expect(parts.slice(0, -1).every((part) => !part.done && part.message.role === 'assistant')).toBe(true);
    expect(
      parts
        .slice(0, -1)
        .map((part) => part.message.content)
        .join('').length,
    ).toBeGreaterThan(0);
    expect(last).toMatchObject({ done: true, done_reason: 'length', eval_count: 6, model: 'tiny' });
    expect(last.prompt_eval_count).toBeGreaterThan(0);
    expect(last.total_duration).toBeGreaterThan(0);
    expect(last.total_duration).toBeGreaterThanOrEqual(last.eval_duration);
  });

  it('answers one object with stream: false, as the same text a seed gives streamed', async () => {
    const request = { model: 'tiny:latest', messages: [{ role: 'user', content: 'Hello' }], options: { num_predict: 5, seed: 7, temperature: 0 } };
    const whole = await ollama.chat({ ...request, stream: false });
    expect(whole).toMatchObject({ done: true, done_reason: 'length', eval_count: 5, message: { role: 'assistant' } });
    let streamed = '';
    for await (const part of await ollama.chat({ ...request, stream: true })) streamed += part.message.content;
    expect(streamed).toBe(whole.message.content);
  });

  it('takes tools, an assistant tool call (arguments as an object) and the tool result', async () => {
    const answer = await ollama.chat({
      model: 'tiny',
      stream: false,
      options: { num_predict: 3 },
      tools: [
        {
          type: 'function',
          function: { name: 'weather', description: 'The weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        },
      ],
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: '', tool_calls: [{ function: { name: 'weather', arguments: { city: 'Oslo' } } }] },
        { role: 'tool', content: 'Sunny', tool_name: 'weather' },
      ],
    });
    expect(answer.done).toBe(true);
    expect(answer.prompt_eval_count).toBeGreaterThan(0);
  });

  it('follows format "json" as valid JSON', async () => {
    const answer = await ollama.chat({
      model: 'tiny',
      stream: false,
      format: 'json',
      messages: [{ role: 'user', content: 'JSON please' }],
      options: { num_predict: 40 },
    });
    if (answer.done_reason === 'stop') expect(() => JSON.parse(answer.message.content) as unknown).not.toThrow();
    else expect(answer.message.content.startsWith('{') || answer.message.content.startsWith('[')).toBe(true);
  });

  it("refuses bytes that are no image with a clear 400 in Ollama's shape", async () => {
    const error = await failure(ollama.chat({ model: 'tiny', stream: false, messages: [{ role: 'user', content: 'What is this?', images: ['aGVsbG8='] }] }));
    expect(error.status_code).toBe(400);
    expect(error.error).toMatch(/messages\[0\]\.images\[0\] is not an image local models here can read/);
  });

  it('loads on an empty message list, and keep_alive 0 unloads', async () => {
    const loaded = await ollama.chat({ model: 'tiny', messages: [], stream: false });
    expect(loaded).toMatchObject({ done: true, done_reason: 'load' });
    const running = await ollama.ps();
    const tiny = running.models.find((model) => model.name === 'tiny:latest');
    expect(tiny).toBeDefined();
    expect(new Date(tiny!.expires_at).getTime()).toBeGreaterThan(0);
    const unloaded = await ollama.chat({ model: 'tiny', messages: [], stream: false, keep_alive: 0 });
    expect(unloaded).toMatchObject({ done: true, done_reason: 'unload' });
    expect((await ollama.ps()).models.map((model) => model.name)).not.toContain('tiny:latest');
  });

  it('unloads after the reply with keep_alive "0s"', async () => {
    await ollama.chat({ model: 'tiny', messages: [{ role: 'user', content: 'Hi' }], stream: false, options: { num_predict: 2 } });
    expect((await ollama.ps()).models.map((model) => model.name)).toContain('tiny:latest');
    await ollama.chat({ model: 'tiny', messages: [{ role: 'user', content: 'Hi' }], stream: false, keep_alive: '0s', options: { num_predict: 2 } });
    await until(async () => (((await (await send(server, '/api/ps')).json()) as OllamaRunningList).models.length === 0 ? true : undefined), 'tiny unloaded');
  });
});

describe('generate', () => {
  it('streams a prompt through the chat template, and answers raw prompts', async () => {
    let text = '';
    let last: GenerateResponse | undefined;
    for await (const part of await ollama.generate({ model: 'tiny', prompt: 'Once', system: 'Be brief.', stream: true, options: { num_predict: 4 } })) {
      text += part.response;
      last = part;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(last).toMatchObject({ done: true, done_reason: 'length', eval_count: 4, context: [] });
    const raw = await ollama.generate({ model: 'tiny', prompt: 'Once upon', raw: true, stream: false, options: { num_predict: 3 } });
    expect(raw).toMatchObject({ done: true, eval_count: 3 });
    // Without the template the prompt is a few tokens; through it, more.
    expect(raw.prompt_eval_count).toBeLessThan(last!.prompt_eval_count);
  });

  it('loads on an empty prompt', async () => {
    expect(await ollama.generate({ model: 'tiny', prompt: '', stream: false })).toMatchObject({ done: true, done_reason: 'load', response: '' });
  });
});

describe('fill-in-the-middle', () => {
  it('fills between a prompt and a suffix with the FIM tokens of a model that has them, shown as insert', async () => {
    expect((await ollama.show({ model: 'tiny-fim' })).capabilities).toContain('insert');
    expect((await ollama.show({ model: 'tiny' })).capabilities).not.toContain('insert');
    const prompt = 'def add(a, b):\n    return';
    const plain = await ollama.generate({ model: 'tiny-fim', prompt, raw: true, stream: false, options: { num_predict: 4 } });
    const filled = await ollama.generate({ model: 'tiny-fim', prompt, suffix: '\n\nprint(add(1, 2))\n', stream: false, options: { num_predict: 4 } });
    expect(filled).toMatchObject({ done: true, eval_count: 4 });
    // The suffix and the three FIM tokens are part of the prompt.
    expect(filled.prompt_eval_count).toBeGreaterThan(plain.prompt_eval_count + 3);
  });

  it("refuses a suffix on a model without FIM tokens, in Ollama's shape", async () => {
    const error = await failure(ollama.generate({ model: 'tiny', prompt: 'a', suffix: 'b', stream: false }));
    expect(error.status_code).toBe(400);
    expect(error.error).toMatch(/suffix|fill-in-the-middle/i);
  });
});

describe('think', () => {
  const ask = { model: 'thinker', messages: [{ role: 'user', content: 'Think, then answer.' }], options: { num_predict: 16, seed: 3 } };

  it('shows a thinking model as thinking, and returns the thought in message.thinking, apart from the answer', async () => {
    expect((await ollama.show({ model: 'thinker' })).capabilities).toContain('thinking');
    const answer = await ollama.chat({ ...ask, think: 'low', stream: false });
    expect(answer.message.thinking!.length).toBeGreaterThan(0);
    expect(answer.message.content.length).toBeGreaterThan(0);
    expect(answer.message.content).not.toContain(answer.message.thinking);
    expect(answer.eval_count).toBe(16);
  });

  it('streams the thought before the answer', async () => {
    const order: string[] = [];
    for await (const part of await ollama.chat({ ...ask, think: 'low', stream: true })) {
      if (part.message.thinking) order.push('thought');
      if (part.message.content) order.push('text');
    }
    expect(order[0]).toBe('thought');
    expect(order.lastIndexOf('thought')).toBeLessThan(order.indexOf('text'));
  });

  it('gives no thought with think: false, on chat and generate', async () => {
    const off = await ollama.chat({ ...ask, think: false, stream: false });
    expect(off.message.thinking).toBeUndefined();
    expect(off.message.content.length).toBeGreaterThan(0);
    const generated = await ollama.generate({ model: 'thinker', prompt: 'Think.', think: false, stream: false, options: { num_predict: 6 } });
    expect(generated.thinking).toBeUndefined();
    expect(generated.response!.length).toBeGreaterThan(0);
  });
});

describe('embeddings', () => {
  it('embeds a string and an array (/api/embed), and one prompt (/api/embeddings)', async () => {
    const one = await ollama.embed({ model: 'tiny-embed', input: 'hello' });
    expect(one.embeddings).toHaveLength(1);
    expect(one.embeddings[0]!.length).toBeGreaterThan(0);
    const two = await ollama.embed({ model: 'tiny-embed:latest', input: ['hello', 'world'] });
    expect(two.embeddings).toHaveLength(2);
    expect(two.embeddings[0]).toEqual(one.embeddings[0]);
    const older = await ollama.embeddings({ model: 'tiny-embed', prompt: 'hello' });
    expect(older.embedding).toEqual(one.embeddings[0]);
  });

  it("refuses a chat model with Ollama's shape", async () => {
    const error = await failure(ollama.embed({ model: 'tiny', input: 'hello' }));
    expect(error.status_code).toBe(400);
    expect(error.error.length).toBeGreaterThan(0);
  });
});

describe("bad input, in Ollama's error shape", () => {
  it('says which model is unknown', async () => {
    const error = await failure(ollama.chat({ model: 'llama3.2', messages: [{ role: 'user', content: 'Hi' }], stream: false }));
    expect(error.status_code).toBe(404);
    expect(error.error).toMatch(/^model "llama3\.2" not found/);
    expect((await failure(ollama.show({ model: 'nope' }))).status_code).toBe(404);
  });

  it('says the model is missing, and a malformed body is not JSON', async () => {
    const missing = await send(server, '/api/chat', { body: { messages: [] } });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ error: expect.stringMatching(/model/) as unknown });
    const malformed = await fetch(`${server.url}/api/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model": "tiny",' });
    expect(malformed.status).toBe(400);
    expect(Object.keys((await malformed.json()) as object)).toEqual(['error']);
  });

  it("answers an unknown /api path and Ollama's store routes with a clear error", async () => {
    const unknown = await send(server, '/api/nothing');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: string }).error).toMatch(/\/api\/chat/);
    for (const [method, path] of [
      ['POST', '/api/create'],
      ['POST', '/api/copy'],
      ['POST', '/api/push'],
      ['DELETE', '/api/delete'],
    ] as const) {
      const refused = await send(server, path, { method, body: { model: 'tiny' } });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: string }).error).toMatch(/Hearth does not support/);
    }
  });

  it("refuses to pull a name of Ollama's library, and answers success for a model already here", async () => {
    const error = await failure(ollama.pull({ model: 'llama3.2', stream: false }));
    expect(error.status_code).toBe(400);
    expect(error.error).toMatch(/hf\.co\/\{owner\}\/\{repo\}:\{quant\}/);
    expect(await ollama.pull({ model: 'tiny:latest', stream: false })).toMatchObject({ status: 'success' });
  });

  it('refuses a keep_alive that is not a duration', async () => {
    const response = await send(server, '/api/generate', { body: { model: 'tiny', prompt: 'Hi', keep_alive: 'soon' } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(/keep_alive "soon" is not a duration/);
  });

  it('lists through GET /api/tags without any key while auth is off', async () => {
    const list = (await (await send(server, '/api/tags')).json()) as OllamaModelList;
    expect(list.models.length).toBeGreaterThan(0);
  });
});
