import type { ModelRecord } from '#shared/api/openai.js';
import type { BrowserEngine, EngineChatRequest } from '$lib/engines/types';
import { stubFetch } from '../helpers/fetch-stub.js';

/**
 * For the chat store's tests (jsdom): replies as the companion streams them, an empty history, and
 * a store ready to send. The store is imported when first asked for, after the test file's mocks.
 */
const event = (fields: object) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'tiny', ...fields })}\n\n`;

/** A streamed chat completion's event carrying `content`. */
export const chunk = (content: string) => event({ choices: [{ index: 0, delta: { content }, finish_reason: null }] });

/** A streamed chat completion's event carrying a piece of the thought (`reasoning_content`, or `reasoning` as some providers name it). */
/** A reply stream that sends one delta of `text`, then nothing until `signal` cancels it. */
export function endless(text: string, signal: AbortSignal | null | undefined): Response {
  const encoder = new TextEncoder();
  return new Response(
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(chunk(text)));
        signal?.addEventListener('abort', () => controller.error(signal.reason));
      },
    }),
  );
}

export const thoughtChunk = (text: string, field: 'reasoning_content' | 'reasoning' = 'reasoning_content') =>
  event({ choices: [{ index: 0, delta: { [field]: text }, finish_reason: null }] });

/** The event with the token counts, last before `data: [DONE]`. */
export const usage = (prompt: number, completion: number) =>
  event({ choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } });

/** Removes the conversations (IndexedDB) and the drafts and model choice (localStorage) of earlier tests. */
export async function emptyHistory(): Promise<void> {
  const { deleteConversation, listConversations } = await import('$lib/storage/conversations');
  for (const conversation of await listConversations()) await deleteConversation(conversation.id);
  localStorage.clear();
}

/** A new chat store with the stored conversations read, set to answer with `model`. */
export async function readyChat(model = 'companion:tiny') {
  const { ChatStore } = await import('$lib/stores/chat.svelte');
  const chat = new ChatStore();
  await chat.init();
  chat.model = model;
  return chat;
}

/** What the stand-in browser engine was asked, in order (cleared by the test file). */
export const engineCalls: EngineChatRequest[] = [];

/**
 * A browser engine (wllama) that answers "words" and records each request, for a test file's
 * `vi.mock('$lib/engines/host', ...)` (imported inside the mock's factory: mocks are hoisted).
 */
export const wordsEngine: BrowserEngine = {
  kind: 'wllama',
  status: async () => ({ kind: 'wllama', available: true, reason: null, details: {} }),
  models: async () => [],
  load: async () => undefined,
  chat: async (request, onDelta) => {
    engineCalls.push(request);
    onDelta('words');
    return { text: 'words', finishReason: 'stop', promptTokens: 5, completionTokens: 1, tokensPerSecond: 10 };
  },
  unload: async () => undefined,
  remove: async () => undefined,
};

/** A model of the companion's list, loaded, with `capabilities`. */
export const modelRecord = (id: string, capabilities: ModelRecord['capabilities']) =>
  ({ id, object: 'model', created: 1, owned_by: 'local', source: 'local', capabilities, context_window: 8192, loaded: true }) as ModelRecord;

/** fetch as the companion answers it: its health, its models (the models store's list) and chat completions by `answer`; the bodies sent. */
export function companionChat(answer: () => Response): { messages: { role: string; content: unknown }[] }[] {
  const bodies: { messages: { role: string; content: unknown }[] }[] = [];
  stubFetch(async (path, init) => {
    const { models } = await import('$lib/stores/models.svelte');
    if (path === '/health') return Response.json({ status: 'ok', version: '1' });
    if (path === '/v1/models') return Response.json({ object: 'list', data: models.companion });
    if (path !== '/v1/chat/completions') throw new TypeError(`unexpected ${path}`);
    bodies.push(JSON.parse(String(init.body)));
    return answer();
  });
  return bodies;
}
