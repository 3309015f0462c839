import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkDocument } from '../../../companion/src/config/document.js';
import { sharedApp } from '../../helpers/app.js';

/*
 * The admin credential (`<data-dir>/admin-token`) and the proxy rule, through inject. The test
 * helper adds the credential to admin requests by itself; `anonymous` sends exactly what it is
 * given, as another local process would.
 */

const hearth = sharedApp({ withModel: false, resetConfig: true });
const anonymous = (options: InjectOptions) => hearth.injectWithoutAdmin(options);

afterEach(() => {
  vi.useRealTimers();
});

function requireAuth(): void {
  const { document, problems } = checkDocument({
    ...structuredClone(hearth.baseline),
    server: { ...structuredClone(hearth.baseline.server), auth: { required: true } },
  });
  expect(problems).toEqual([]);
  hearth.services.reconfigure(document!);
}

function errorOf(response: LightMyRequestResponse, status: number): { code: string; message: string; type: string } {
  expect(response.statusCode, response.body).toBe(status);
  return (response.json() as { error: { code: string; message: string; type: string } }).error;
}

const token = () => hearth.services.admin.token;
const adminCalls: InjectOptions[] = [
  { method: 'GET', url: '/admin/status' },
  { method: 'GET', url: '/admin/keys' },
  { method: 'POST', url: '/admin/keys', payload: { label: 'local intruder' } },
  { method: 'DELETE', url: '/admin/keys/key_0000000000000000' },
  { method: 'GET', url: '/admin/config/export' },
  { method: 'POST', url: '/admin/config/plan', payload: { document: { version: 1 } } },
  { method: 'POST', url: '/admin/config/apply', payload: { document: { version: 1, server: { auth: { required: false } } }, confirm_high_risk: true } },
  { method: 'GET', url: '/admin/mcp/services' },
  { method: 'POST', url: '/admin/models/tiny/unload' },
  { method: 'POST', url: '/admin/session/links' },
];

describe('admin routes need the local admin credential', () => {
  it('another local process without it cannot create a key, even with auth required', async () => {
    requireAuth();
    const before = hearth.services.keys.list().length;
    const error = errorOf(await anonymous({ method: 'POST', url: '/admin/keys', payload: { label: 'x' } }), 401);
    expect(error.code).toBe('admin_credential_required');
    expect(error.type).toBe('authentication_error');
    expect(error.message).toMatch(/admin-token/);
    // The command is spelled the way it runs on this machine (a clone here: npm run hearth -- open).
    expect(error.message).toMatch(/npm run hearth -- open/);
    expect(hearth.services.keys.list()).toHaveLength(before);
  });

  it('refuses every admin route without it, with a wrong one, or with an access key, and changes nothing', async () => {
    const key = hearth.services.keys.create({ label: 'not admin' }).key;
    const before = hearth.services.keys.list().length;
    const configBefore = JSON.stringify(hearth.services.config);
    for (const authorization of [undefined, 'Bearer ', `Bearer ${key}`, 'Bearer hadm_wrong', `Bearer ${token()}x`, `Basic ${token()}`]) {
      for (const options of adminCalls) {
        const headers = authorization === undefined ? {} : { authorization };
        expect(errorOf(await anonymous({ ...options, headers }), 401).code, `${options.url} ${authorization}`).toBe('admin_credential_required');
      }
    }
    expect(hearth.services.keys.list()).toHaveLength(before);
    expect(JSON.stringify(hearth.services.config)).toBe(configBefore);
  });

  it('accepts it as a Bearer token', async () => {
    const response = await anonymous({ method: 'GET', url: '/admin/status', headers: { authorization: `Bearer ${token()}` } });
    expect(response.statusCode, response.body).toBe(200);
  });

  it('is kept in <data-dir>/admin-token, mode 0600, in a data folder of mode 0700', () => {
    const file = join(hearth.services.paths.root, 'admin-token');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(hearth.services.paths.root).mode & 0o777).toBe(0o700);
  });

  it('is never enough on its own: a remote peer, a proxied request or a foreign Origin is still refused', async () => {
    const headers = { authorization: `Bearer ${token()}` };
    expect(errorOf(await anonymous({ method: 'GET', url: '/admin/status', headers, remoteAddress: '203.0.113.7' }), 403).code).toBe('permission_denied');
    expect(errorOf(await anonymous({ method: 'GET', url: '/admin/status', headers: { ...headers, 'x-forwarded-for': '203.0.113.7' } }), 403).code).toBe(
      'permission_denied',
    );
    expect(errorOf(await anonymous({ method: 'GET', url: '/admin/status', headers: { ...headers, origin: 'http://evil.example' } }), 403).code).toBe(
      'origin_not_allowed',
    );
  });
});

describe('the app signs in through a one-time link', () => {
  async function signIn(code: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return anonymous({ method: 'POST', url: '/admin/session', headers, payload: { code } });
  }

  const cookieOf = (response: LightMyRequestResponse) => String(response.headers['set-cookie']).split(';')[0]!;

  it('a link made with the credential gives one HttpOnly SameSite=Strict cookie that opens the admin routes', async () => {
    const made = await anonymous({ method: 'POST', url: '/admin/session/links', headers: { authorization: `Bearer ${token()}`, host: '127.0.0.1:4777' } });
    expect(made.statusCode, made.body).toBe(200);
    const link = made.json() as { url: string; expires_at: string };
    expect(link.url).toMatch(/^http:\/\/127\.0\.0\.1:4777\/sign-in#[A-Za-z0-9_-]{40,}$/);
    expect(Date.parse(link.expires_at)).toBeGreaterThan(Date.now());
    const code = link.url.split('#')[1]!;

    const signed = await signIn(code, { host: '127.0.0.1:4777', origin: 'http://127.0.0.1:4777' });
    expect(signed.statusCode, signed.body).toBe(204);
    const setCookie = String(signed.headers['set-cookie']);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Path=\/admin/);
    // The cookie is not the token itself.
    expect(setCookie).not.toContain(token());

    const cookie = cookieOf(signed);
    const status = await anonymous({ method: 'GET', url: '/admin/status', headers: { cookie, host: '127.0.0.1:4777', origin: 'http://127.0.0.1:4777' } });
    expect(status.statusCode, status.body).toBe(200);
    // A tampered cookie is refused.
    const tampered = `${cookie.slice(0, -2)}xx`;
    expect(errorOf(await anonymous({ method: 'GET', url: '/admin/status', headers: { cookie: tampered } }), 401).code).toBe('admin_credential_required');
    // The cookie is refused through a proxy, like the token.
    expect((await anonymous({ method: 'GET', url: '/admin/status', headers: { cookie, via: '1.1 proxy' } })).statusCode).toBe(403);

    // One time only.
    expect(errorOf(await signIn(code), 401).code).toBe('admin_credential_required');
  });

  it('prints the first link at start (services issue one) and refuses unknown and expired codes', async () => {
    expect(errorOf(await signIn('not-a-code'), 401).code).toBe('admin_credential_required');
    vi.useFakeTimers({ toFake: ['Date'] });
    const issued = hearth.services.admin.issueLink();
    vi.setSystemTime(Date.now() + 16 * 60_000);
    expect(errorOf(await signIn(issued.code), 401).code).toBe('admin_credential_required');
  });

  it('signing in is refused from a remote peer, through a proxy and from a foreign origin, and does not use up the code', async () => {
    const { code } = hearth.services.admin.issueLink();
    expect((await anonymous({ method: 'POST', url: '/admin/session', remoteAddress: '203.0.113.7', payload: { code } })).statusCode).toBe(403);
    expect((await signIn(code, { 'x-forwarded-for': '203.0.113.7' })).statusCode).toBe(403);
    expect((await signIn(code, { origin: 'http://evil.example' })).statusCode).toBe(403);
    expect((await signIn(code)).statusCode).toBe(204);
  });

  it('signing out clears the cookie', async () => {
    const response = await anonymous({ method: 'DELETE', url: '/admin/session' });
    expect(response.statusCode).toBe(204);
    expect(String(response.headers['set-cookie'])).toMatch(/Max-Age=0/);
  });
});

describe('requests that passed through a proxy are never loopback', () => {
  const PROXY_HEADERS = [
    { forwarded: 'for=203.0.113.50' },
    { 'x-forwarded-for': '203.0.113.50' },
    { 'x-forwarded-host': 'hearth.example.org' },
    { 'x-forwarded-proto': 'https' },
    { 'x-real-ip': '203.0.113.50' },
    { via: '1.1 nginx' },
  ];

  it('admin refuses them, credential or not', async () => {
    for (const header of PROXY_HEADERS) {
      const error = errorOf(await hearth.app.inject({ method: 'GET', url: '/admin/status', headers: header }), 403);
      expect(error.code, JSON.stringify(header)).toBe('permission_denied');
      expect(error.message).toMatch(/proxy/);
    }
  });

  it('the API asks them for a key even with auth off, and accepts a valid one', async () => {
    const { key } = hearth.services.keys.create({ label: 'through a proxy' });
    for (const [index, header] of PROXY_HEADERS.entries()) {
      // One loopback peer per proxy, so the failures of one never slow down another.
      const remoteAddress = `127.0.9.${index + 1}`;
      expect(errorOf(await hearth.app.inject({ method: 'GET', url: '/v1/models', remoteAddress, headers: header }), 401).code).toBe('invalid_api_key');
      const openaiStyle = { ...header, authorization: 'Bearer sk-openai-style' };
      expect(errorOf(await hearth.app.inject({ method: 'GET', url: '/v1/models', remoteAddress, headers: openaiStyle }), 401).code).toBe('invalid_api_key');
      const withKey = { ...header, authorization: `Bearer ${key}` };
      expect((await hearth.app.inject({ method: 'GET', url: '/v1/models', remoteAddress, headers: withKey })).statusCode).toBe(200);
    }
    expect((await hearth.app.inject({ method: 'GET', url: '/health', headers: PROXY_HEADERS[1] })).statusCode).toBe(200);
  });
});
