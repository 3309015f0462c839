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
