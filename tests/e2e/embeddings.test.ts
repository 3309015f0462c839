import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddingList, ModelList } from '#shared/api/openai.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';
import { tinyEmbeddingModelPath } from '../helpers/models.js';
import { rejectedWith } from '../helpers/rejection.js';
import { newDataDir, startServer, type RunningServer } from '../helpers/server.js';

// The wire types are what the official client expects.
const wireMatchesClient = (list: EmbeddingList): OpenAI.CreateEmbeddingResponse => list as OpenAI.CreateEmbeddingResponse;
void wireMatchesClient;

let server: RunningServer;
let mock: MockProvider;
let client: OpenAI;

beforeAll(async () => {
  mock = await startMockProvider({ models: ['text-embedding-3-small'] });
  const dataDir = await newDataDir(true);
  copyFileSync(await tinyEmbeddingModelPath(), join(dataDir, 'models', 'tiny-embed.gguf'));
  writeFileSync(
    join(dataDir, 'config.yaml'),
    ['version: 1', 'models:', '  threads: 1', '  context_size: 256', 'providers:', '  - name: mock', `    base_url: ${mock.baseUrl}`, ''].join('\n'),
  );
  server = await startServer({ dataDir });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});

afterAll(async () => {
  expect(await server.stop()).toBe(0);
  await mock.close();
});

const norm = (vector: ArrayLike<number>) => Math.sqrt(Array.from(vector).reduce((sum, value) => sum + value * value, 0));

const badRequest = (promise: Promise<unknown>) => rejectedWith(promise, OpenAI.APIError);

describe('/v1/embeddings with the official openai client', () => {
  it('lists the tiny embedding model with the embedding capability only', async () => {
    const list = (await (await fetch(`${server.url}/v1/models`)).json()) as ModelList;
    expect(list.data.find((model) => model.id === 'tiny-embed')?.capabilities).toEqual(['embedding']);
    expect(list.data.find((model) => model.id === 'tiny')?.capabilities).toEqual(['chat', 'completion', 'tools']);
  });

  it('embeds a string in base64 (the client default) and as floats, the same unit vector', async () => {
    const decoded = await client.embeddings.create({ model: 'tiny-embed', input: 'The cat sat on the mat.' });
    expect(decoded.object).toBe('list');
    expect(decoded.model).toBe('tiny-embed');
    expect(decoded.data).toHaveLength(1);
    expect(decoded.data[0]).toMatchObject({ object: 'embedding', index: 0 });
    expect(decoded.data[0]!.embedding).toHaveLength(64);
    expect(norm(decoded.data[0]!.embedding)).toBeCloseTo(1, 5);
    expect(decoded.usage.prompt_tokens).toBeGreaterThan(2);
    expect(decoded.usage.total_tokens).toBe(decoded.usage.prompt_tokens);

    const floats = await client.embeddings.create({ model: 'tiny-embed', input: 'The cat sat on the mat.', encoding_format: 'float' });
    expect(Array.isArray(floats.data[0]!.embedding)).toBe(true);
    const base64 = await client.embeddings.create({ model: 'tiny-embed', input: 'The cat sat on the mat.', encoding_format: 'base64' });
    expect(typeof base64.data[0]!.embedding).toBe('string');
    const bytes = Buffer.from(base64.data[0]!.embedding as unknown as string, 'base64');
    const fromBase64 = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
    expect(fromBase64).toEqual(floats.data[0]!.embedding);
    expect(Array.from(decoded.data[0]!.embedding)).toEqual(floats.data[0]!.embedding);
  });

  it('embeds an array in one request: one vector per input, in order, each as if sent alone', async () => {
    const texts = ['alpha beta', 'a longer sentence about the sea', 'alpha beta', 'x'];
    const batch = await client.embeddings.create({ model: 'tiny-embed', input: texts, encoding_format: 'float' });
    expect(batch.data.map((item) => item.index)).toEqual([0, 1, 2, 3]);
    const singles: OpenAI.CreateEmbeddingResponse[] = [];
    for (const text of texts) singles.push(await client.embeddings.create({ model: 'tiny-embed', input: text, encoding_format: 'float' }));
    batch.data.forEach((item, index) => {
      const alone = singles[index]!.data[0]!.embedding;
      item.embedding.forEach((value, at) => expect(value).toBeCloseTo(alone[at]!, 4));
    });
    expect(batch.data[0]!.embedding).toEqual(batch.data[2]!.embedding);
    expect(batch.data[0]!.embedding).not.toEqual(batch.data[1]!.embedding);
    expect(batch.usage.prompt_tokens).toBe(singles.reduce((sum, single) => sum + single.usage.prompt_tokens, 0));
  });

  it('accepts dimensions equal to the model’s own size and refuses any other with a 400', async () => {
    const same = await client.embeddings.create({ model: 'tiny-embed', input: 'hi', dimensions: 64, encoding_format: 'float' });
    expect(same.data[0]!.embedding).toHaveLength(64);
    const error = await badRequest(client.embeddings.create({ model: 'tiny-embed', input: 'hi', dimensions: 32 }));
    expect(error.status).toBe(400);
    expect(error.param).toBe('dimensions');
    expect(error.message).toMatch(/64-dimensional/);
  });

  it('refuses a chat model for embeddings and the embedding model for chat, each with a clear 400', async () => {
    const notEmbedding = await badRequest(client.embeddings.create({ model: 'tiny', input: 'hi' }));
    expect(notEmbedding.status).toBe(400);
    expect(notEmbedding.code).toBe('model_not_embedding');
    expect(notEmbedding.param).toBe('model');
    const notChat = await badRequest(client.chat.completions.create({ model: 'tiny-embed', messages: [{ role: 'user', content: 'hi' }] }));
    expect(notChat.status).toBe(400);
    expect(notChat.code).toBe('model_not_chat');
  });

  it('refuses token arrays, empty inputs and an input longer than the context with 400s naming the input', async () => {
    const tokens = await badRequest(client.embeddings.create({ model: 'tiny-embed', input: [1, 2, 3] }));
    expect(tokens.status).toBe(400);
    expect(tokens.message).toMatch(/token arrays/);
    const nested = await badRequest(client.embeddings.create({ model: 'tiny-embed', input: [[1, 2]] }));
    expect(nested.message).toMatch(/token arrays/);
    const empty = await badRequest(client.embeddings.create({ model: 'tiny-embed', input: ['fine', ''] }));
    expect(empty.status).toBe(400);
    expect(empty.param).toBe('input[1]');
    const none = await badRequest(client.embeddings.create({ model: 'tiny-embed', input: [] }));
    expect(none.status).toBe(400);
    const long = await badRequest(client.embeddings.create({ model: 'tiny-embed', input: ['short', 'word '.repeat(400)] }));
    expect(long.status).toBe(400);
    expect(long.code).toBe('context_length_exceeded');
    expect(long.param).toBe('input[1]');
    const unknown = await badRequest(client.embeddings.create({ model: 'no-such-model', input: 'hi' }));
    expect(unknown.status).toBe(404);
  });

  it('forwards a provider model’s request to the provider, base64 included', async () => {
    const result = await client.embeddings.create({ model: 'mock/text-embedding-3-small', input: ['one', 'two'] });
    expect(result.model).toBe('mock/text-embedding-3-small');
    expect(result.data).toHaveLength(2);
    expect(Array.from(result.data[1]!.embedding)).toEqual(Array.from(new Float32Array([0.1, 0.2, 0.3])));
    const forwarded = mock.requests.filter((request) => request.path.endsWith('/embeddings')).at(-1)!;
    expect(forwarded.body).toMatchObject({ model: 'text-embedding-3-small', input: ['one', 'two'], encoding_format: 'base64' });
  });

  it('shows the loaded embedding model as loaded', async () => {
    const record = (await (await fetch(`${server.url}/v1/models/tiny-embed`)).json()) as { loaded: boolean };
    expect(record.loaded).toBe(true);
  });
});
