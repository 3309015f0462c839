import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, clearKeyRefusal, send, takesKey } from '$lib/api/client';
import { streamChat } from '$lib/api/chat';
import { listModels, modelFileSize } from '$lib/api/models';
import { health, loadModel, serverStatus, verifyKey } from '$lib/api/server';
import { forgetAccessKey, keyFormatProblem, keyPrefix, readAccessKey, storeAccessKey } from '$lib/storage/access-key';
import { stubFetch } from '../helpers/fetch-stub.js';

const KEY = 'hth_abcdefGHIJKL0123456789_-abcdefghijklmnopqrstu';
const OTHER = 'hth_zzzzzzOTHERKEY0123456789_-zzzzzzzzzzzzzzzzzz';

interface Call {
  path: string;
  method: string;
  authorization: string | null;
}

/** A companion answering every path with `handler`; records what each request carried. */
function companion(handler: (path: string, authorization: string | null) => Response = () => Response.json({ object: 'list', data: [] })) {
  const calls: Call[] = [];
  stubFetch(async (path, init) => {
    const authorization = new Headers(init.headers).get('authorization');
    calls.push({ path, method: init.method ?? 'GET', authorization });
    return handler(path, authorization);
  });
  return calls;
}

const refusal = (message: string) => Response.json({ error: { message, type: 'authentication_error', code: 'invalid_api_key', param: null } }, { status: 401 });
const NEEDS_KEY = 'This server requires an access key: send Authorization: Bearer <key>. Create one with hearth keys create.';
const REVOKED = 'The access key has been revoked. Check the key, or create a new one with hearth keys create.';

beforeEach(() => {
  localStorage.clear();
  clearKeyRefusal();
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('the saved access key', () => {
  it('is kept in localStorage and shown only by its prefix', () => {
    expect(readAccessKey()).toBeNull();
    storeAccessKey(KEY);
    expect(readAccessKey()).toBe(KEY);
    expect(keyPrefix(KEY)).toBe('hth_abcdef…');
    forgetAccessKey();
    expect(readAccessKey()).toBeNull();
    expect(localStorage.length).toBe(0);
  });

  it('is checked for its shape before anything is sent', () => {
    expect(keyFormatProblem(KEY)).toBeNull();
    expect(keyFormatProblem('')).toMatch(/Paste/);
    expect(keyFormatProblem('sk-123')).toMatch(/starts with hth_/);
    expect(keyFormatProblem('hth_abc def')).toMatch(/only letters/);
    expect(keyFormatProblem('hth_abc\ndef')).toMatch(/only letters/);
  });
});

describe('takesKey', () => {
  it.each([
    ['/v1/models', true],
    ['/v1/chat/completions', true],
    ['/v1/models/tiny/file', true],
    ['/agents', true],
    ['/agents/helper/runs', true],
    ['/mcp', true],
    ['/mcp/tools', true],
    ['/memory/records?q=1', true],
    ['/memory/agents/helper/facts', true],
    ['/v1/media/jobs', true],
    // The Memory screen, not a memory route.
    ['/memory', false],
    ['/memory?agent=helper', false],
    ['/agents/approvals/appr_1', false],
    ['/admin/status', false],
    ['/admin/models/tiny/load', false],
    ['/admin', false],
    ['/health', false],
    ['/', false],
    ['/server', false],
    // Not a page: the companion answers it (a JSON 404 that says which /v1 routes exist).
    ['/v1', true],
    ['/agentsx', false],
    ['//evil.example/v1/models', false],
    ['http://evil.example/v1/models', false],
  ])('%s -> %s', (path, expected) => {
    expect(takesKey(path)).toBe(expected);
  });
});

describe('the client', () => {
  it('sends no Authorization header while no key is saved', async () => {
    const calls = companion();
    await listModels();
    expect(calls).toEqual([{ path: '/v1/models', method: 'GET', authorization: null }]);
  });

  it('sends the saved key as a Bearer header on API requests, never in the URL', async () => {
    storeAccessKey(KEY);
    const calls = companion((path) =>
      path === '/v1/chat/completions'
        ? new Response(
            'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"tiny","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
          )
        : path.endsWith('/file')
          ? new Response(null, { headers: { 'content-length': '10' } })
          : Response.json({ object: 'list', data: [] }),
    );
    await listModels();
    await streamChat({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }] });
    await modelFileSize('tiny');
    await send('/mcp/tools');
    expect(calls).toEqual([
      { path: '/v1/models', method: 'GET', authorization: `Bearer ${KEY}` },
      { path: '/v1/chat/completions', method: 'POST', authorization: `Bearer ${KEY}` },
      { path: '/v1/models/tiny/file', method: 'HEAD', authorization: `Bearer ${KEY}` },
      { path: '/mcp/tools', method: 'GET', authorization: `Bearer ${KEY}` },
    ]);
    expect(calls.some((call) => call.path.includes(KEY))).toBe(false);
  });

  it('never sends a key to admin routes or /health, even one passed explicitly', async () => {
    storeAccessKey(KEY);
    const calls = companion(() => Response.json({ status: 'ok', version: '1', id: 'tiny', loaded: true }));
    await health();
    await serverStatus();
    await loadModel('tiny');
    await send('/admin/status', { headers: { authorization: `Bearer ${KEY}` } });
    expect(calls.map((call) => call.authorization)).toEqual([null, null, null, null]);
  });

  it('checks a pasted key with that key, not the saved one', async () => {
    storeAccessKey(OTHER);
    const calls = companion();
    await verifyKey(KEY);
    expect(calls).toEqual([{ path: '/v1/models', method: 'GET', authorization: `Bearer ${KEY}` }]);
  });

  it("reports the companion's message for a refused key, without the key in it", async () => {
    companion(() => refusal('The access key is not a valid key. Check the key, or create a new one with hearth keys create.'));
    const error = await verifyKey(KEY).catch((error: unknown) => error);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, code: 'invalid_api_key', message: expect.stringMatching(/^The access key is not a valid key/) });
    expect(String((error as Error).message)).not.toContain(KEY.slice(4));
  });

  it('stops sending a saved key the companion refused, and says why when a key is still needed', async () => {
    storeAccessKey(KEY);
    const calls = companion((_path, authorization) => refusal(authorization ? REVOKED : NEEDS_KEY));

    await expect(listModels()).rejects.toMatchObject({ status: 401, message: REVOKED });
    // The refused key is not sent again (each refusal counts towards the address's lockout)…
    await expect(listModels()).rejects.toMatchObject({ status: 401, code: 'invalid_api_key', message: REVOKED });
    expect(calls.map((call) => call.authorization)).toEqual([`Bearer ${KEY}`, null]);

    // …until a key is saved again.
    storeAccessKey(OTHER);
    await expect(listModels()).rejects.toMatchObject({ message: REVOKED });
    expect(calls.at(-1)?.authorization).toBe(`Bearer ${OTHER}`);
  });

  it('goes on without a refused key where the companion needs none', async () => {
    storeAccessKey(KEY);
    const calls = companion((_path, authorization) => (authorization ? refusal(REVOKED) : Response.json({ object: 'list', data: [] })));
    await expect(listModels()).rejects.toMatchObject({ status: 401 });
    expect(await listModels()).toEqual([]);
    clearKeyRefusal();
    await expect(listModels()).rejects.toMatchObject({ status: 401 });
    expect(calls.map((call) => call.authorization)).toEqual([`Bearer ${KEY}`, null, `Bearer ${KEY}`]);
  });

  it('keeps sending a key that is only short of a scope or rate-limited', async () => {
    storeAccessKey(KEY);
    const calls = companion(() =>
      Response.json(
        { error: { message: 'This key may not use inference routes (its scopes: tools).', type: 'permission_error', code: 'permission_denied', param: null } },
        { status: 403 },
      ),
    );
    await expect(listModels()).rejects.toMatchObject({ status: 403, code: 'permission_denied' });
    await expect(listModels()).rejects.toMatchObject({ status: 403 });
    expect(calls.map((call) => call.authorization)).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
  });
});
