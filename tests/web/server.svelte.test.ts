import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clearKeyRefusal } from '$lib/api/client';
import { readAccessKey, storeAccessKey } from '$lib/storage/access-key';
import { ServerStore } from '$lib/stores/server.svelte';
import { stubFetch } from '../helpers/fetch-stub.js';

beforeEach(() => {
  localStorage.clear();
  clearKeyRefusal();
});

afterEach(() => {
  vi.unstubAllGlobals();
});

const status = { version: '0.1.0', address: { host: '127.0.0.1', port: 4777 }, data_dir: '/d', models_dirs: ['/d/models'], loaded: [], providers: [] };

describe('ServerStore', () => {
  it('is connected when /health answers', async () => {
    stubFetch(() => Response.json({ status: 'ok', version: '0.1.0' }));
    const server = new ServerStore();
    expect(await server.check()).toBe('connected');
    expect(server.version).toBe('0.1.0');
  });

  it('is unreachable when the companion does not answer', async () => {
    stubFetch(() => Promise.reject(new TypeError('Failed to fetch')));
    const server = new ServerStore();
    expect(await server.check()).toBe('unreachable');
    expect(server.problem).toBe('The companion is not answering.');
    expect(server.detail).toMatch(/Failed to fetch/);
  });

  it('needs a key when the companion answers 401', async () => {
    stubFetch(() => Response.json({ error: { message: 'key', type: 'authentication_error', code: 'invalid_api_key', param: null } }, { status: 401 }));
    const server = new ServerStore();
    expect(await server.check()).toBe('auth');
  });

  it('checks now, again every 10 s and whenever the browser comes back online, until stopped: the data folder going and coming back shows without a reload', async () => {
    vi.useFakeTimers();
    try {
      let gone = false;
      let asked = 0;
      stubFetch((path) => {
        if (path.endsWith('/health')) asked++;
        return gone
          ? Response.json({ error: { message: 'gone', type: 'server_error', code: 'data_folder_gone', param: null } }, { status: 503 })
          : Response.json({ status: 'ok', version: '0.1.0', object: 'list', data: [] });
      });
      const server = new ServerStore();
      const stop = server.watch();
      await vi.advanceTimersByTimeAsync(0);
      expect(asked).toBe(1);
      expect(server.status).toBe('connected');

      gone = true;
      await vi.advanceTimersByTimeAsync(9_999);
      expect(server.dataFolderGone).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(asked).toBe(2);
      expect(server.dataFolderGone).toBe(true);

      gone = false;
      window.dispatchEvent(new Event('online'));
      await vi.advanceTimersByTimeAsync(0);
      expect(asked).toBe(3);
      expect(server.dataFolderGone).toBe(false);

      stop();
      window.dispatchEvent(new Event('online'));
      await vi.advanceTimersByTimeAsync(30_000);
      expect(asked).toBe(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reads address, port and folders from /admin/status', async () => {
    stubFetch(() => Response.json(status));
    const server = new ServerStore();
    await server.refreshDetails();
    expect(server.port).toBe(4777);
    expect(server.host).toBe('127.0.0.1');
    expect(server.details?.models_dirs).toEqual(['/d/models']);
  });

  it('follows the llama-server build while it runs, and stops asking once it is done', async () => {
    vi.useFakeTimers();
    try {
      const builds = [
        { state: 'building', progress: 0.2, step: 'compiling (16 of 79 steps)', started_at: '2026-11-26T10:00:00Z' },
        { state: 'building', progress: 0.6, step: 'compiling (47 of 79 steps)', started_at: '2026-11-26T10:00:00Z' },
        { state: 'ready', built_at: '2026-11-26T10:02:00Z', build_seconds: 120 },
      ];
      let asked = 0;
      stubFetch(() => Response.json({ ...status, engine: { setting: 'auto', build: builds[Math.min(asked++, builds.length - 1)] } }));
      const server = new ServerStore();
      await server.refreshDetails();
      const stop = server.followBuild(1000);
      await vi.advanceTimersByTimeAsync(1000);
      expect(server.details?.engine.build).toMatchObject({ state: 'building', progress: 0.6 });
      await vi.advanceTimersByTimeAsync(1000);
      expect(server.details?.engine.build.state).toBe('ready');
      await vi.advanceTimersByTimeAsync(5000);
      expect(asked).toBe(3);
      stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('follows the native build while it runs, and Try again asks for it and reads the state again', async () => {
    vi.useFakeTimers();
    try {
      const quick = { state: 'ready', built_at: '2026-11-26T10:02:00Z', build_seconds: 120 };
      let native: Record<string, unknown> = { state: 'building', progress: 0.4, step: 'compiling (40 of 100 steps)', started_at: '2026-11-26T10:03:00Z' };
      const restarted = { state: 'building', progress: 0.01, step: 'unpacking the llama.cpp source', started_at: '2026-11-26T10:06:00Z' };
      const asked: string[] = [];
      stubFetch((path, init) => {
        asked.push(`${init.method ?? 'GET'} ${new URL(path, 'http://x').pathname}`);
        if (path.endsWith('/admin/engine/native-build')) native = restarted;
        return Response.json(
          path.endsWith('/admin/engine/native-build')
            ? { setting: 'auto', build: native }
            : { ...status, engine: { setting: 'auto', build: quick, native: { setting: 'auto', build: native } } },
        );
      });
      const server = new ServerStore();
      await server.refreshDetails();
      const stop = server.followBuild(1000);
      native = { state: 'failed', reason: 'the native llama-server build failed: CMake is not installed', failed_at: '2026-11-26T10:05:00Z' };
      await vi.advanceTimersByTimeAsync(1000);
      expect(server.details?.engine.native?.build.state).toBe('failed');
      // A failed build is not asked about again on its own.
      const before = asked.length;
      await vi.advanceTimersByTimeAsync(5000);
      expect(asked.length).toBe(before);
      await server.retryNativeBuild();
      expect(asked.slice(before)).toEqual(['POST /admin/engine/native-build', 'GET /admin/status']);
      expect(server.details?.engine.native?.build).toMatchObject({ state: 'building', progress: 0.01 });
      expect(server.retryingNative).toBe(false);
      stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('explains that details are loopback-only', async () => {
    stubFetch(() => Response.json({ error: { message: 'no', type: 'permission_error', code: 'permission_denied', param: null } }, { status: 403 }));
    const server = new ServerStore();
    await server.refreshDetails();
    expect(server.detailsError).toMatch(/loopback/);
  });

  it('loads and unloads, then refreshes; a failure is reported', async () => {
    const fetch = stubFetch((path) =>
      path.endsWith('/unload')
        ? Response.json({ error: { message: 'boom', type: 'server_error', code: 'internal_error', param: null } }, { status: 500 })
        : Response.json(path === '/admin/status' ? status : { id: 'tiny', loaded: true }),
    );
    const server = new ServerStore();
    await server.load('tiny');
    expect(server.actionError).toBeNull();
    await server.unload('tiny');
    expect(server.actionError).toBe('Unloading tiny failed: boom');
    expect(server.pending).toEqual({});
    expect(fetch.mock.calls.map(([path, init]) => `${init?.method ?? 'GET'} ${path}`)).toEqual([
      'POST /admin/models/tiny/load',
      'GET /admin/status',
      'POST /admin/models/tiny/unload',
      'GET /admin/status',
    ]);
  });
});

const KEY = 'hth_RIGHTkey0123456789abcdefghijklmnopqrstuvwxyz';
const WRONG = 'hth_WRONGkey0123456789abcdefghijklmnopqrstuvwxyz';
const NEEDS_KEY = 'This server requires an access key: send Authorization: Bearer <key>. Create one with hearth keys create.';
const INVALID = 'The access key is not a valid key. Check the key, or create a new one with hearth keys create.';
const fail = (status: number, code: string, message: string) =>
  Response.json({ error: { message, type: 'authentication_error', code, param: null } }, { status });

/**
 * A companion with `server.auth.required: true` that knows `keys`: /health and /admin/* need
 * no key, the API answers 401 without an accepted one. Records the Authorization of each request.
 */
function keyedCompanion(keys: Record<string, 'ok' | 'no-scope'> = { [KEY]: 'ok' }) {
  const calls: { path: string; authorization: string | null }[] = [];
  const fetch = stubFetch((path, init) => {
    const authorization = new Headers(init.headers).get('authorization');
    calls.push({ path, authorization });
    if (path === '/health') return Response.json({ status: 'ok', version: '0.1.0' });
    if (path.startsWith('/admin/')) return Response.json(status);
    const key = authorization?.replace(/^Bearer /, '');
    if (!key) return fail(401, 'invalid_api_key', NEEDS_KEY);
    if (!keys[key]) return fail(401, 'invalid_api_key', INVALID);
    if (keys[key] === 'no-scope') return fail(403, 'permission_denied', 'This key may not use inference routes (its scopes: tools).');
    return Response.json({ object: 'list', data: [] });
  });
  return { calls, fetch };
}

describe('ServerStore and the access key', () => {
  it('needs a key when /health answers but the API asks for one', async () => {
    keyedCompanion();
    const server = new ServerStore();
    expect(await server.check()).toBe('auth');
    expect(server.version).toBe('0.1.0');
    expect(server.problem).toBe('No key is saved in this browser.');
    expect(server.detail).toBe(NEEDS_KEY);
    expect(server.keyPrefix).toBeNull();
  });

  it("does not keep a wrong key, and shows the companion's message", async () => {
    const { calls } = keyedCompanion();
    const server = new ServerStore();
    await server.check();

    expect(await server.saveKey(`  ${WRONG}\n`)).toBe(false);
    expect(server.keyError).toBe(INVALID);
    expect(server.savingKey).toBe(false);
    expect(server.keyPrefix).toBeNull();
    expect(readAccessKey()).toBeNull();
    expect(server.status).toBe('auth');
    expect(calls.at(-1)).toEqual({ path: '/v1/models', authorization: `Bearer ${WRONG}` });
  });

  it('refuses text that is not a key without sending it', async () => {
    const { fetch } = keyedCompanion();
    const server = new ServerStore();
    expect(await server.saveKey('sk-not-a-hearth-key')).toBe(false);
    expect(server.keyError).toMatch(/starts with hth_/);
    expect(fetch).not.toHaveBeenCalled();
  });

  it('does not keep a key without the inference scope', async () => {
    keyedCompanion({ [KEY]: 'no-scope' });
    const server = new ServerStore();
    expect(await server.saveKey(KEY)).toBe(false);
    expect(server.keyError).toBe('This key may not use inference routes (its scopes: tools).');
    expect(readAccessKey()).toBeNull();
  });

  it('keeps a right key, shows only its prefix and turns connected', async () => {
    const { calls } = keyedCompanion();
    const server = new ServerStore();
    await server.check();
    server.keyError = 'from an earlier attempt';

    expect(await server.saveKey(KEY)).toBe(true);
    expect(readAccessKey()).toBe(KEY);
    expect(server.keyPrefix).toBe('hth_RIGHTk…');
    expect(server.keyError).toBeNull();
    expect(server.status).toBe('connected');
    expect(server.problem).toBeNull();
    // Nothing the page shows holds the key itself.
    expect([server.keyPrefix, server.keyError, server.problem, server.detail].join(' ')).not.toContain(KEY.slice(10));
    // The check after saving goes out with the saved key; /health without it.
    expect(calls.slice(-3)).toEqual([
      { path: '/v1/models', authorization: `Bearer ${KEY}` },
      { path: '/health', authorization: null },
      { path: '/v1/models', authorization: `Bearer ${KEY}` },
    ]);
  });

  it('reads a key saved earlier, and forgets it', async () => {
    storeAccessKey(KEY);
    keyedCompanion();
    const server = new ServerStore();
    expect(server.keyPrefix).toBe('hth_RIGHTk…');
    expect(await server.check()).toBe('connected');

    await server.forgetKey();
    expect(readAccessKey()).toBeNull();
    expect(server.keyPrefix).toBeNull();
    expect(server.status).toBe('auth');
  });

  it('says so when the saved key is refused later, and does not send it again', async () => {
    storeAccessKey(WRONG);
    const { calls } = keyedCompanion();
    const server = new ServerStore();
    expect(await server.check()).toBe('auth');
    expect(server.problem).toBe('The saved key hth_WRONGk… was not accepted.');
    expect(server.detail).toBe(INVALID);

    expect(await server.check()).toBe('auth');
    expect(server.detail).toBe(INVALID);
    expect(calls.filter((call) => call.path === '/v1/models').map((call) => call.authorization)).toEqual([`Bearer ${WRONG}`, null]);
  });

  it('stays "needs a key" when the loopback-only admin routes answer', async () => {
    keyedCompanion();
    const server = new ServerStore();
    await server.check();
    await server.refreshDetails();
    expect(server.details?.version).toBe('0.1.0');
    expect(server.status).toBe('auth');
  });

  it('follows a key saved or forgotten in another tab', async () => {
    keyedCompanion();
    const server = new ServerStore();
    const stop = server.watch(60_000);
    await vi.waitFor(() => expect(server.status).toBe('auth'));

    storeAccessKey(KEY);
    window.dispatchEvent(new StorageEvent('storage', { key: 'hearth.access-key', newValue: KEY }));
    expect(server.keyPrefix).toBe('hth_RIGHTk…');
    await vi.waitFor(() => expect(server.status).toBe('connected'));
    stop();
  });
});
