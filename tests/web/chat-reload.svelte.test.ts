import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { chunk, emptyHistory, endless, readyChat } from './chat-store.js';
import { stubFetch } from '../helpers/fetch-stub.js';

/*
 * A reply survives a reload: the store keeps the partial reply in IndexedDB as it streams, and a
 * store started afterwards (the reloaded page) shows what had arrived, marked interrupted, with
 * Continue, which asks again and keeps the cut-off part as an earlier version.
 */

const { listConversations } = await import('$lib/storage/conversations');

/** Streams one delta, then nothing until cancelled (a reply cut off by the reload); later requests answer at once. */
function companion() {
  let requests = 0;
  stubFetch(async (path, init) => {
    if (path === '/health') return Response.json({ status: 'ok', version: '1' });
    if (path !== '/v1/chat/completions') throw new TypeError(`unexpected ${path}`);
    if (++requests > 1) return new Response(chunk('A whole reply') + 'data: [DONE]\n\n');
    return endless('What had arrived', init.signal);
  });
}

beforeEach(async () => {
  await emptyHistory();
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('a reply cut off by a reload', () => {
  it('is stored as it streams, and shown after the reload as interrupted with Continue', async () => {
    companion();
    const before = await readyChat();
    const sending = before.send('Tell me a story');
    // In storage while it still streams: the last part that arrived too, not only the first save.
    await vi.waitFor(async () => {
      const [stored] = await listConversations();
      expect(stored?.messages[1]).toMatchObject({ role: 'assistant', content: 'What had arrived', status: 'streaming' });
    });
    expect(before.streaming).toBe(before.activeId);

    const after = await readyChat();
    expect(after.active?.messages[1]).toMatchObject({ content: 'What had arrived', status: 'interrupted' });
    expect(after.problem).toMatchObject({ kind: 'interrupted', messageId: after.active?.messages[1]?.id });
    expect(after.problem?.message).toMatch(/cut off when the page was reloaded or closed; what had arrived is kept/);
    // Stored as interrupted too: a second reload shows the same.
    expect((await listConversations())[0]?.messages[1]?.status).toBe('interrupted');
    before.stop();
    await sending;

    const reloaded = await readyChat();
    await reloaded.regenerate(reloaded.problem?.messageId ?? undefined);
    expect(reloaded.active?.messages.map((message) => message.content)).toEqual(['Tell me a story', 'A whole reply']);
    expect(reloaded.versionAt(1)).toEqual({ position: 2, count: 2 });
  });

  it('leaves finished replies alone', async () => {
    stubFetch(async (path) => (path === '/health' ? Response.json({ status: 'ok' }) : new Response(chunk('Done') + 'data: [DONE]\n\n')));
    const chat = await readyChat();
    await chat.send('Hello');
    const after = await readyChat();
    expect(after.active?.messages[1]).toMatchObject({ content: 'Done', status: 'done' });
    expect(after.problem).toBeNull();
  });
});
