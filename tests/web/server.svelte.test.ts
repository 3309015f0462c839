import { afterEach, describe, expect, it, vi } from 'vitest';
import { ServerStore } from '$lib/stores/server.svelte';

function respond(handler: (path: string, init: RequestInit) => Response | Promise<Response>) {
  const fetch = vi.fn(async (input: RequestInfo | URL, init: RequestInit = {}) => handler(String(input), init));
  vi.stubGlobal('fetch', fetch);
  return fetch;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

const status = { version: '0.1.0', address: { host: '127.0.0.1', port: 4777 }, data_dir: '/d', models_dirs: ['/d/models'], loaded: [], providers: [] };

describe('ServerStore', () => {
  it('is connected when /health answers', async () => {
    respond(() => Response.json({ status: 'ok', version: '0.1.0' }));
    const server = new ServerStore();
    expect(await server.check()).toBe('connected');
    expect(server.version).toBe('0.1.0');
  });

  it('is unreachable when the companion does not answer', async () => {
    respond(() => Promise.reject(new TypeError('Failed to fetch')));
    const server = new ServerStore();
    expect(await server.check()).toBe('unreachable');
    expect(server.problem).toBe('The companion is not answering.');
    expect(server.detail).toMatch(/Failed to fetch/);
  });

  it('needs a key when the companion answers 401', async () => {
    respond(() => Response.json({ error: { message: 'key', type: 'authentication_error', code: 'invalid_api_key', param: null } }, { status: 401 }));
    const server = new ServerStore();
    expect(await server.check()).toBe('auth');
  });

  it('reads address, port and folders from /admin/status', async () => {
    respond(() => Response.json(status));
    const server = new ServerStore();
    await server.refreshDetails();
    expect(server.port).toBe(4777);
    expect(server.host).toBe('127.0.0.1');
    expect(server.details?.models_dirs).toEqual(['/d/models']);
  });

  it('explains that details are loopback-only', async () => {
    respond(() => Response.json({ error: { message: 'no', type: 'permission_error', code: 'permission_denied', param: null } }, { status: 403 }));
    const server = new ServerStore();
    await server.refreshDetails();
    expect(server.detailsError).toMatch(/loopback/);
  });

  it('loads and unloads, then refreshes; a failure is reported', async () => {
    const fetch = respond((path) =>
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
