import { afterEach, describe, expect, it, vi } from 'vitest';
import { RestartStore } from '$lib/stores/restart.svelte';
import { stubFetch } from '../helpers/fetch-stub.js';

afterEach(() => vi.unstubAllGlobals());

const refusal = (code: string, status: number) =>
  Response.json({ error: { message: `${code} message`, type: 'invalid_request_error', code, param: null } }, { status });

/** A companion that answers the restart with `url`, then /admin/status with the start times in `starts` (null: not answering), one per call. */
function companion(url: string, starts: (string | null)[]) {
  const asked: string[] = [];
  stubFetch(async (path, init) => {
    asked.push(`${init.method ?? 'GET'} ${path}`);
    if (path === '/admin/restart') return Response.json({ restarting: true, url, started_at: 'first' }, { status: 202 });
    if (path === '/admin/status') {
      const next = starts.length > 1 ? starts.shift()! : starts[0]!;
      if (next === null) throw new TypeError('Failed to fetch');
      return Response.json({ started_at: next });
    }
    return refusal('route_not_found', 404);
  });
  return asked;
}

describe('Restart now', () => {
  it('waits while the companion is away and until one started after the request answers, then counts the restart', async () => {
    const asked = companion(location.origin, ['first', null, null, 'second']);
    const store = new RestartStore();
    const done = store.restart();
    expect(store.state).toBe('restarting');
    await done;
    expect(store).toMatchObject({ state: 'idle', problem: null, finished: 1 });
    expect(asked.filter((entry) => entry === 'GET /admin/status')).toHaveLength(4);
  });

  it('says why when the companion refuses to restart', async () => {
    stubFetch(async () => refusal('restart_unavailable', 409));
    const store = new RestartStore();
    await store.restart();
    expect(store).toMatchObject({ state: 'failed', finished: 0, problem: 'restart_unavailable message' });
  });

  it('points to the new port when the companion comes back on another one', async () => {
    companion('http://127.0.0.1:4999', ['first']);
    const store = new RestartStore();
    await store.restart();
    expect(store).toMatchObject({ state: 'moved', url: `${location.protocol}//${location.hostname}:4999`, finished: 0 });
  });
});
