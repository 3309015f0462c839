import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_WAITING_REQUESTS } from '../../../companion/src/access/sign-in-requests.js';
import type { SignInAnswer, SignInAsk, WaitingSignIns } from '#shared/api/admin.js';
import { asOwner, sharedApp } from '../../helpers/app.js';

/*
 * Signing in a second browser on this machine: it asks (no credential), shows a code, and a
 * signed-in browser approves that code; the asking browser then picks up a session with the
 * secret only it holds. `anonymous` sends exactly what it is given, as another browser or
 * another local process would; `asOwner` adds the admin credential, as a signed-in browser has.
 */

const hearth = sharedApp({ withModel: false });
const HOST = '127.0.0.1:4777';
const OWN = { host: HOST, origin: `http://${HOST}` };
const anonymous = (options: InjectOptions) => hearth.app.inject(options);
const owner = (options: InjectOptions) => hearth.app.inject(asOwner(options));

afterEach(() => {
  vi.useRealTimers();
});

function errorOf(response: LightMyRequestResponse, status: number): { code: string; message: string } {
  expect(response.statusCode, response.body).toBe(status);
  return (response.json() as { error: { code: string; message: string } }).error;
}

async function ask(headers: Record<string, string> = OWN): Promise<SignInAsk> {
  const response = await anonymous({ method: 'POST', url: '/admin/session/requests', headers });
  expect(response.statusCode, response.body).toBe(201);
  return response.json();
}

const answer = (secret: string, headers: Record<string, string> = OWN) =>
  anonymous({ method: 'POST', url: '/admin/session/requests/answer', headers, payload: { secret } });
const approve = (code: string) => owner({ method: 'POST', url: '/admin/session/requests/approve', payload: { code } });
const waiting = async () => ((await owner({ method: 'GET', url: '/admin/session/requests' })).json() as WaitingSignIns).data;

describe('a browser asks to be signed in and a signed-in browser approves it', () => {
  it('waits until approved, then gets a session of its own (cookie and proof) that opens the admin routes, once', async () => {
    const asked = await ask();
    expect(asked.code).toMatch(/^[A-Z2-9]{6}$/);
    expect(asked.secret.length).toBeGreaterThanOrEqual(43);
    expect((await waiting()).map((request) => request.id)).toHaveLength(1);
    // The list never carries the code: the person reads it off the asking browser.
    expect(JSON.stringify(await waiting())).not.toContain(asked.code);

    const before = (await answer(asked.secret)).json() as SignInAnswer;
    expect(before.state).toBe('waiting');
    expect(before.proof).toBeUndefined();

    // Typed the way a person might: lower case, with a space.
    expect((await approve(`${asked.code.slice(0, 3).toLowerCase()} ${asked.code.slice(3)}`)).statusCode).toBe(204);
    expect(await waiting()).toEqual([]);
    const approved = await answer(asked.secret);
    const body = approved.json() as SignInAnswer;
    expect(body.state).toBe('approved');
    expect(body.proof).toMatch(/^hses_/);
    const cookie = String(([] as string[]).concat(approved.headers['set-cookie'] as string[])[0]);
    expect(cookie).toMatch(/HttpOnly; SameSite=Strict/);
    const status = await anonymous({
      method: 'GET',
      url: '/admin/status',
      headers: { host: HOST, cookie: cookie.split(';')[0]!, 'x-hearth-session': body.proof! },
    });
    expect(status.statusCode, status.body).toBe(200);
    // The session is picked up once.
    expect(errorOf(await answer(asked.secret), 404).code).toBe('sign_in_request_not_found');
  });

  it('refuses a wrong code and a second approval of the same code', async () => {
    const asked = await ask();
    const wrong = asked.code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA';
    expect(errorOf(await approve(wrong), 404).code).toBe('sign_in_request_not_found');
    expect(((await answer(asked.secret)).json() as SignInAnswer).state).toBe('waiting');
    expect((await approve(asked.code)).statusCode).toBe(204);
    expect(errorOf(await approve(asked.code), 404).code).toBe('sign_in_request_not_found');
    expect(((await answer(asked.secret)).json() as SignInAnswer).state).toBe('approved');
  });

  it('an approval needs the admin credential: another local process cannot approve, list or refuse', async () => {
    const asked = await ask();
    const { id } = (await waiting())[0]!;
    const tries = [
      { method: 'POST', url: '/admin/session/requests/approve', headers: OWN, payload: { code: asked.code } },
      { method: 'GET', url: '/admin/session/requests', headers: OWN },
      { method: 'DELETE', url: `/admin/session/requests/${id}`, headers: OWN },
    ] satisfies InjectOptions[];
    for (const options of tries) expect(errorOf(await anonymous(options), 401).code, options.url).toBe('admin_credential_required');
    expect(((await answer(asked.secret)).json() as SignInAnswer).state).toBe('waiting');
    // Nor does anyone without the secret get the session once approved.
    expect((await approve(asked.code)).statusCode).toBe(204);
    expect(errorOf(await answer('not-the-secret'), 404).code).toBe('sign_in_request_not_found');
    expect(errorOf(await answer(`${asked.secret.slice(0, -1)}x`), 404).code).toBe('sign_in_request_not_found');
    expect(((await answer(asked.secret)).json() as SignInAnswer).state).toBe('approved');
  });

  it('a refused request is told so, once, and can no longer be approved', async () => {
    const asked = await ask();
    const { id } = (await waiting())[0]!;
    expect((await owner({ method: 'DELETE', url: `/admin/session/requests/${id}` })).statusCode).toBe(204);
    expect(errorOf(await owner({ method: 'DELETE', url: `/admin/session/requests/${id}` }), 404).code).toBe('sign_in_request_not_found');
    expect(errorOf(await approve(asked.code), 404).code).toBe('sign_in_request_not_found');
    const refused = await answer(asked.secret);
    expect((refused.json() as SignInAnswer).state).toBe('refused');
    expect(refused.headers['set-cookie']).toBeUndefined();
    expect(errorOf(await answer(asked.secret), 404).code).toBe('sign_in_request_not_found');
  });

  it('a request expires after 5 minutes: it cannot be approved, and the asking browser is told', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const asked = await ask();
    vi.setSystemTime(Date.now() + 5 * 60_000 + 1);
    expect(errorOf(await approve(asked.code), 404).code).toBe('sign_in_request_not_found');
    expect(await waiting()).toEqual([]);
    expect(((await answer(asked.secret)).json() as SignInAnswer).state).toBe('expired');
  });

  it('asking is refused from another origin, a remote peer and through a proxy', async () => {
    for (const options of [
      { headers: { host: HOST, origin: 'http://127.0.0.1:8888' } },
      { headers: { host: HOST, origin: 'https://evil.example' } },
      { headers: OWN, remoteAddress: '203.0.113.7' },
      { headers: { ...OWN, 'x-forwarded-for': '203.0.113.7' } },
      { headers: { host: 'evil.example:4777' } },
    ]) {
      const response = await anonymous({ method: 'POST', url: '/admin/session/requests', ...options });
      expect(response.statusCode, JSON.stringify(options)).toBe(403);
    }
    // Nor can a page of another origin ask for the answer of a request it somehow learned.
    const asked = await ask();
    expect((await approve(asked.code)).statusCode).toBe(204);
    expect((await answer(asked.secret, { host: HOST, origin: 'http://127.0.0.1:8888' })).statusCode).toBe(403);
    expect(((await answer(asked.secret)).json() as SignInAnswer).state).toBe('approved');
  });

  it(`at most ${MAX_WAITING_REQUESTS} wait at once: another is refused with Retry-After until one ends`, async () => {
    const asked: SignInAsk[] = [];
    for (let i = (await waiting()).length; i < MAX_WAITING_REQUESTS; i += 1) asked.push(await ask());
    const refused = await anonymous({ method: 'POST', url: '/admin/session/requests', headers: OWN });
    expect(errorOf(refused, 429).code).toBe('rate_limit_exceeded');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Every code waiting is different.
    expect(new Set((await waiting()).map((request) => request.id)).size).toBe(MAX_WAITING_REQUESTS);
    expect(new Set(asked.map((request) => request.code)).size).toBe(asked.length);
    for (const { id } of await waiting()) await owner({ method: 'DELETE', url: `/admin/session/requests/${id}` });
    await ask();
  });
});
