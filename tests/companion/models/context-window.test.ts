/**
 * What a client needs to keep a conversation inside the model's context: the window one request
 * may use (GET /v1/models `context_window`), and token counts that agree between a reply's usage
 * and the next prompt that carries that reply.
 */
import { describe, expect, it } from 'vitest';
import type { ChatCompletion, ModelList } from '#shared/api/openai.js';
import { configuredDataDir } from '../../helpers/server.js';
import { sharedApp } from '../../helpers/app.js';

const harness = sharedApp({
  prepare: async () => ({ dataDir: await configuredDataDir('models:\n  external_sources: false\n  threads: 1\n  context_size: 1024\n') }),
});

const tiny = async () => {
  const response = await harness.app.inject({ method: 'GET', url: '/v1/models' });
  return (response.json() as ModelList).data.find((model) => model.id === 'tiny')!;
};

const chat = async (messages: { role: string; content: string }[], maxTokens?: number) => {
  const response = await harness.app.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    payload: { model: 'tiny', messages, seed: 5, ...(maxTokens ? { max_tokens: maxTokens } : {}) },
  });
  return { status: response.statusCode, body: response.json() as ChatCompletion & { error?: { code: string; message: string } } };
};

describe('GET /v1/models context_window', () => {
  it('is the configured context size, capped by what the model was trained for, before and after loading', async () => {
    expect(await tiny()).toMatchObject({ context_length: 2048, context_window: 1024, loaded: false });
    expect((await chat([{ role: 'user', content: 'Hello' }], 4)).status).toBe(200);
    expect(await tiny()).toMatchObject({ context_length: 2048, context_window: 1024, loaded: true });
  });
});

describe('token counts across turns', () => {
  it('counts a reply that filled the context about the same when it comes back as history', async () => {
    const first = [{ role: 'user', content: 'Tell me a long story, please.' }];
    const reply = await chat(first);
    expect(reply.status).toBe(200);
    const usage = reply.body.usage!;
    // No max_tokens: the reply takes the rest of the context.
    expect(usage.total_tokens).toBe(1024);
    const next = await chat([...first, { role: 'assistant', content: reply.body.choices[0]!.message.content! }, { role: 'user', content: 'more' }]);
    expect(next.status).toBe(400);
    expect(next.body.error!.code).toBe('context_length_exceeded');
    const counted = Number(/use (\d+) tokens/.exec(next.body.error!.message)?.[1]);
    // The reply's tokens, the prompt before it and a few for "more" and the turn markers.
    expect(counted).toBeGreaterThan(usage.total_tokens);
    expect(counted).toBeLessThan(usage.total_tokens + 24);
  });
});
