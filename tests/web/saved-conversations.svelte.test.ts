import { afterEach, describe, expect, it, vi } from 'vitest';
import { SavedConversationsStore } from '$lib/stores/saved-conversations.svelte';
import { stubFetch } from '../helpers/fetch-stub.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

const MB = 1_000_000;

/** The companion's saved conversations: two files until a DELETE frees them. */
function companion() {
  let files = 2;
  const calls: string[] = [];
  stubFetch((path, init) => {
    calls.push(`${init.method ?? 'GET'} ${path}`);
    if (path !== '/admin/engine/conversations')
      return Response.json({ error: { message: 'no route', type: 'invalid_request_error', code: 'route_not_found', param: null } }, { status: 404 });
    if (init.method === 'DELETE') {
      files = 0;
      return Response.json({ freed_bytes: 30 * MB });
    }
    return Response.json({
      files,
      bytes: files * 15 * MB,
      budget_bytes: 2048 * 2 ** 20,
      models: files ? [{ model: 'tiny', files, bytes: files * 15 * MB }] : [],
    });
  });
  return calls;
}

describe('SavedConversationsStore', () => {
  it('reads how many conversations are saved, and clears them only after asking', async () => {
    const calls = companion();
    const store = new SavedConversationsStore();
    await store.refresh();
    expect(store.info).toMatchObject({ files: 2, bytes: 30 * MB });
    store.confirming = true;
    expect(calls.filter((call) => call.startsWith('DELETE'))).toEqual([]);
    await store.clear();
    expect(calls.filter((call) => call.startsWith('DELETE'))).toEqual(['DELETE /admin/engine/conversations']);
    expect(store.confirming).toBe(false);
    expect(store.notice).toBe('Cleared: 30.0 MB freed.');
    expect(store.info).toMatchObject({ files: 0, models: [] });
  });

  it('says why when the companion refuses', async () => {
    stubFetch(() => Response.json({ error: { message: 'The disk is gone.', type: 'server_error', code: 'internal_error', param: null } }, { status: 500 }));
    const store = new SavedConversationsStore();
    await store.refresh();
    expect(store.info).toBeNull();
    expect(store.error).toBe('The disk is gone.');
  });
});
