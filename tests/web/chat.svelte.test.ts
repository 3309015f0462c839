import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { BrowserEngine, EngineChatRequest } from '$lib/engines/types';
import { chunk, emptyHistory, endless, readyChat, usage } from './chat-store.js';
import { stubFetch } from '../helpers/fetch-stub.js';

// The in-browser engine, as the worker would answer: a fixed reply in three deltas.
const engineCalls: EngineChatRequest[] = [];
const fakeEngine: BrowserEngine = {
  kind: 'wllama',
  status: async () => ({ kind: 'wllama', available: true, reason: null, details: {} }),
  models: async () => [
    { engine: 'wllama', id: 'tiny.gguf', name: 'tiny', sizeBytes: 1, stored: true, runnable: true, reason: null, origin: 'companion: tiny' },
  ],
  load: async () => undefined,
  chat: async (request, onDelta) => {
    engineCalls.push(request);
    for (const text of ['from ', 'the ', 'browser']) onDelta(text);
    return { text: 'from the browser', finishReason: 'length', promptTokens: 5, completionTokens: 3, tokensPerSecond: 250 };
  },
  unload: async () => undefined,
  remove: async () => undefined,
};
vi.mock('$lib/engines/host', () => ({
  ENGINE_KINDS: ['wllama'],
  engineHost: () => ({ engine: () => fakeEngine }),
}));

const { ChatStore } = await import('$lib/stores/chat.svelte');
const { listConversations } = await import('$lib/storage/conversations');
const { server } = await import('$lib/stores/server.svelte');

interface Route {
  chat?: (body: Record<string, unknown>, signal: AbortSignal | undefined) => Response | Promise<Response>;
  health?: () => Response | Promise<Response>;
}

function companion(route: Route) {
  const bodies: Record<string, unknown>[] = [];
  stubFetch(async (path, init) => {
    if (path === '/v1/chat/completions') {
      const body = JSON.parse(String(init.body)) as Record<string, unknown>;
      bodies.push(body);
      return route.chat ? route.chat(body, init.signal ?? undefined) : new Response(chunk('Hello') + chunk(' you') + usage(7, 2) + 'data: [DONE]\n\n');
    }
    if (path === '/health') return route.health ? route.health() : Response.json({ status: 'ok', version: '1' });
    throw new TypeError(`unexpected ${path}`);
  });
  return bodies;
}

beforeEach(async () => {
  await emptyHistory();
  engineCalls.length = 0;
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('sending', () => {
  it('creates a conversation, streams the reply and keeps it in IndexedDB with its usage', async () => {
    const bodies = companion({});
    const chat = await readyChat();
    await chat.send('  Hi there  ');

    expect(chat.active?.title).toBe('Hi there');
    expect(chat.active?.messages.map((message) => [message.role, message.content, message.status])).toEqual([
      ['user', 'Hi there', undefined],
      ['assistant', 'Hello you', 'done'],
    ]);
    expect(chat.active?.messages[1]?.stats).toMatchObject({ promptTokens: 7, completionTokens: 2 });
    expect(bodies[0]).toMatchObject({ model: 'tiny', messages: [{ role: 'user', content: 'Hi there' }] });
    // No length limit by default: the reply may use the rest of the model's context.
    expect(bodies[0]).not.toHaveProperty('max_tokens');

    const stored = await listConversations();
    expect(stored).toHaveLength(1);
    expect(stored[0]!.messages.map((message) => message.content)).toEqual(['Hi there', 'Hello you']);
  });

  it('sends the system prompt and sampling settings of the conversation', async () => {
    const bodies = companion({});
    const chat = await readyChat();
    await chat.updateSettings({ systemPrompt: 'Be brief.', temperature: 0.2, topP: 0.9, maxTokens: 32 });
    await chat.send('Hello');
    expect(bodies[0]).toMatchObject({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello' },
      ],
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 32,
    });
    expect(chat.active?.title).toBe('Hello');
  });

  it('stops a reply and keeps the text so far', async () => {
    companion({ chat: (_body, signal) => endless('partial', signal) });
    const chat = await readyChat();
    const sending = chat.send('Tell me everything');
    await vi.waitFor(() => expect(chat.active?.messages[1]?.content).toBe('partial'));
    expect(chat.streaming).toBe(chat.activeId);
    chat.stop();
    await sending;
    expect(chat.active?.messages[1]).toMatchObject({ content: 'partial', status: 'stopped' });
    expect(chat.streaming).toBeNull();
    expect(chat.problem).toBeNull();
  });

  it('regenerates the last reply in place', async () => {
    let count = 0;
    companion({ chat: () => new Response(chunk(`reply ${++count}`) + 'data: [DONE]\n\n') });
    const chat = await readyChat();
    await chat.send('Hello');
    await chat.regenerate();
    expect(chat.active?.messages.map((message) => message.content)).toEqual(['Hello', 'reply 2']);
  });

  it('asks for a model before sending when none is chosen', async () => {
    companion({});
    const chat = await readyChat('');
    await chat.send('Hello');
    expect(chat.problem?.message).toMatch(/Pick a model first/);
    expect(chat.active?.messages.map((message) => message.role)).toEqual(['user']);
  });
});

describe('when the companion goes away', () => {
  it('marks the reply interrupted, says so, and continues with an in-browser model', async () => {
    companion({
      chat: () => Promise.reject(new TypeError('Failed to fetch')),
      health: () => Promise.reject(new TypeError('Failed to fetch')),
    });
    const chat = await readyChat();
    await chat.send('Are you there?');

    expect(chat.problem?.kind).toBe('companion_lost');
    expect(chat.active?.messages.at(-1)).toMatchObject({ role: 'assistant', status: 'interrupted' });
    expect(server.status).toBe('unreachable');

    await chat.continueWith('wllama:tiny.gguf');
    expect(chat.model).toBe('wllama:tiny.gguf');
    expect(chat.problem).toBeNull();
    expect(chat.active?.messages.map((message) => [message.role, message.content, message.model])).toEqual([
      ['user', 'Are you there?', undefined],
      ['assistant', 'from the browser', 'wllama:tiny.gguf'],
    ]);
    expect(chat.active?.messages[1]?.stats).toMatchObject({ completionTokens: 3, tokensPerSecond: 250 });
    expect(engineCalls[0]).toMatchObject({ model: 'tiny.gguf', messages: [{ role: 'user', content: 'Are you there?' }] });
  });

  it('reports a companion error that is not a lost connection as a failure', async () => {
    companion({
      chat: () =>
        Response.json({ error: { message: 'The model could not be loaded.', type: 'server_error', code: 'model_load_failed', param: null } }, { status: 500 }),
    });
    const chat = await readyChat();
    await chat.send('Hello');
    expect(chat.problem).toMatchObject({ kind: 'failed', message: 'The model could not be loaded.', messageId: chat.active?.messages.at(-1)?.id });
    expect(chat.active?.messages.at(-1)?.status).toBe('error');
  });
});

describe('when the companion wants an access key', () => {
  it('says so, points the status at the key form, and keeps the message to try again', async () => {
    const message = 'This server requires an access key: send Authorization: Bearer <key>. Create one with hearth keys create.';
    companion({ chat: () => Response.json({ error: { message, type: 'authentication_error', code: 'invalid_api_key', param: null } }, { status: 401 }) });
    const chat = await readyChat();
    await chat.send('Hello');

    expect(chat.problem).toMatchObject({ kind: 'auth', message });
    expect(server.status).toBe('auth');
    expect(chat.active?.messages.map((entry) => [entry.role, entry.content, entry.status])).toEqual([
      ['user', 'Hello', undefined],
      ['assistant', '', 'error'],
    ]);
  });
});

describe('conversations', () => {
  it('are listed newest first, renamed, searched, deleted, and read back after a reload', async () => {
    companion({});
    const chat = await readyChat();
    await chat.send('About apples');
    chat.startNew();
    await chat.send('About pears');
    expect(chat.conversations.map((conversation) => conversation.title)).toEqual(['About pears', 'About apples']);

    await chat.rename(chat.conversations[1]!.id, '  Fruit  ');
    chat.query = 'pears';
    expect(chat.filtered.map((conversation) => conversation.title)).toEqual(['About pears']);
    chat.query = 'hello you';
    expect(chat.filtered).toHaveLength(2);
    chat.query = 'FRUIT';
    expect(chat.filtered.map((conversation) => conversation.title)).toEqual(['Fruit']);

    await chat.remove(chat.conversations[0]!.id);
    const reloaded = new ChatStore();
    await reloaded.init();
    expect(reloaded.conversations.map((conversation) => conversation.title)).toEqual(['Fruit']);
    expect(reloaded.activeId).toBe(reloaded.conversations[0]!.id);
  });

  it('keep unsent text per conversation across a reload', async () => {
    companion({});
    const chat = await readyChat();
    chat.draft = 'not sent yet';
    const reloaded = new ChatStore();
    await reloaded.init();
    expect(reloaded.draft).toBe('not sent yet');
    expect(reloaded.model).toBe('companion:tiny');
  });
});
