import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AdminCredential } from '../../../companion/src/access/admin-credential.js';
import { checkDocument } from '../../../companion/src/config/document.js';
import { redact } from '../../../companion/src/redaction.js';
import { ADMIN_CALLS } from '../../helpers/admin-calls.js';
import { asOwner, sharedApp } from '../../helpers/app.js';
import { tempFolder } from '../../helpers/temp.js';

/*
 * The admin credential (`<data-dir>/admin-token`) and the proxy rule, through inject. The test
 * helper adds the credential to admin requests by itself; `anonymous` sends exactly what it is
 * given, as another local process would.
 */

const hearth = sharedApp({ withModel: false, resetConfig: true });
const anonymous = (options: InjectOptions) => hearth.app.inject(options);

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
      for (const options of ADMIN_CALLS) {
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
  const HOST = '127.0.0.1:4777';
  async function signIn(code: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return anonymous({ method: 'POST', url: '/admin/session', headers, payload: { code } });
  }

  const cookieOf = (response: LightMyRequestResponse) => String(([] as string[]).concat(response.headers['set-cookie'] as string[])[0]).split(';')[0]!;

  /** A signed-in app: its session cookie (name=value) and its proof. */
  async function session(): Promise<{ cookie: string; proof: string }> {
    const signed = await signIn(hearth.services.admin.issueLink().code, { host: HOST, origin: `http://${HOST}` });
    expect(signed.statusCode, signed.body).toBe(200);
    return { cookie: cookieOf(signed), proof: (signed.json() as { proof: string }).proof };
  }

  const status = (headers: Record<string, string>) => anonymous({ method: 'GET', url: '/admin/status', headers: { host: HOST, ...headers } });
  const both = (app: { cookie: string; proof: string }) => ({ cookie: app.cookie, 'x-hearth-session': app.proof });

  it('a link made with the credential gives an HttpOnly SameSite=Strict cookie and a proof that together open the admin routes', async () => {
    const made = await anonymous({ method: 'POST', url: '/admin/session/links', headers: { authorization: `Bearer ${token()}`, host: HOST } });
    expect(made.statusCode, made.body).toBe(200);
    const link = made.json() as { url: string; expires_at: string };
    expect(link.url).toMatch(/^http:\/\/127\.0\.0\.1:4777\/sign-in#[A-Za-z0-9_-]{40,}$/);
    expect(Date.parse(link.expires_at)).toBeGreaterThan(Date.now());
    const code = link.url.split('#')[1]!;

    const signed = await signIn(code, { host: HOST, origin: `http://${HOST}` });
    expect(signed.statusCode, signed.body).toBe(200);
    const setCookie = String(signed.headers['set-cookie']);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Path=\/admin/);
    expect(setCookie).toMatch(/^hearth_admin_4777=hses_/);
    expect(setCookie).not.toContain(token());
    const { proof, expires_at } = signed.json() as { proof: string; expires_at: string };
    expect(proof).toMatch(/^hses_[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(expires_at)).toBeGreaterThan(Date.now());

    const app = { cookie: cookieOf(signed), proof };
    expect((await status({ ...both(app), origin: `http://${HOST}` })).statusCode).toBe(200);
    // A tampered cookie or proof is refused.
    expect(errorOf(await status({ ...both(app), cookie: `${app.cookie.slice(0, -2)}xx` }), 401).code).toBe('admin_credential_required');
    expect(errorOf(await status({ ...both(app), 'x-hearth-session': `${proof.slice(0, -2)}xx` }), 401).code).toBe('admin_credential_required');
    // Through a proxy it is refused, like the token.
    expect((await status({ ...both(app), via: '1.1 proxy' })).statusCode).toBe(403);
    // One time only.
    expect(errorOf(await signIn(code), 401).code).toBe('admin_credential_required');
  });

  it('the cookie alone opens nothing: a page of another port on 127.0.0.1 can make the browser send it, but cannot read the proof', async () => {
    const app = await session();
    const refused = await status({ cookie: app.cookie });
    expect(errorOf(refused, 401).code).toBe('admin_credential_required');
    // Not under another hearth_admin* name either, nor the proof alone.
    const value = app.cookie.split('=')[1]!;
    for (const cookie of [`hearth_admin=${value}`, `hearth_admin_1=${value}`, `hearth_adminx=${value}`]) {
      expect(errorOf(await status({ cookie, 'x-hearth-session': app.proof }), 401).code, cookie).toBe('admin_credential_required');
    }
    expect(errorOf(await status({ 'x-hearth-session': app.proof }), 401).code).toBe('admin_credential_required');
    // Nor is an MCP service applied with it (what another local user would do with the session).
    const applied = await anonymous({
      method: 'POST',
      url: '/admin/config/apply',
      headers: { host: HOST, cookie: app.cookie },
      payload: { document: { version: 1, mcp_services: { run: { transport: 'stdio', command: 'id' } } }, confirm_high_risk: true },
    });
    expect(errorOf(applied, 401).code).toBe('admin_credential_required');
  });

  it('each sign-in is a session of its own: random values, not one derived from the token', async () => {
    const first = await session();
    const second = await session();
    expect(first.cookie).not.toBe(second.cookie);
    expect(first.proof).not.toBe(second.proof);
    // One's cookie with the other's proof is no session.
    expect((await status({ cookie: first.cookie, 'x-hearth-session': second.proof })).statusCode).toBe(401);
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
    expect((await signIn(code)).statusCode).toBe(200);
  });

  it('signing out ends the session for good, not only the cookie in this browser', async () => {
    const app = await session();
    const response = await anonymous({ method: 'DELETE', url: '/admin/session', headers: { host: HOST, ...both(app) } });
    expect(response.statusCode).toBe(204);
    expect(String(response.headers['set-cookie'])).toMatch(/Max-Age=0/);
    expect(errorOf(await status(both(app)), 401).code).toBe('admin_credential_required');
  });

  it('"sign out everywhere" ends every session; it needs the credential', async () => {
    const one = await session();
    const two = await session();
    expect((await anonymous({ method: 'DELETE', url: '/admin/sessions', headers: { host: HOST, cookie: one.cookie } })).statusCode).toBe(401);
    const ended = await anonymous({ method: 'DELETE', url: '/admin/sessions', headers: { host: HOST, ...both(one) } });
    expect(ended.statusCode, ended.body).toBe(200);
    expect((ended.json() as { ended: number }).ended).toBeGreaterThanOrEqual(2);
    for (const app of [one, two]) expect((await status(both(app))).statusCode).toBe(401);
  });

  it('sessions are kept as digests in the database: they outlive a restart, and a new admin token ends them', async () => {
    const app = await session();
    const rows = hearth.services.db.prepare('SELECT id, proof FROM admin_sessions').all() as { id: string; proof: string }[];
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(app.cookie.split('=')[1]!);
    expect(stored).not.toContain(app.proof);
    const value = app.cookie.split('=')[1]!;
    // A log line that carried one would show [redacted].
    expect(redact(`cookie ${value} proof ${app.proof}`)).toBe('cookie [redacted] proof [redacted]');
    // What a restart builds from the same data folder accepts it.
    const again = new AdminCredential(join(hearth.services.paths.root, 'admin-token'), hearth.services.db);
    expect(again.acceptsSession(value, app.proof)).toBe(true);
    // A replaced token (admin-token deleted, Hearth restarted) accepts none of the old ones.
    const replaced = new AdminCredential(join(tempFolder('admin'), 'admin-token'), hearth.services.db);
    expect(replaced.acceptsSession(value, app.proof)).toBe(false);
  });

  it('a session not used for 30 days has ended', async () => {
    const app = await session();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 31 * 86_400_000);
    expect(errorOf(await status(both(app)), 401).code).toBe('admin_credential_required');
  });

  it('asked without a credential, GET /admin/session says only whether it is signed in and the commands, no folders', async () => {
    const signedOut = (await anonymous({ method: 'GET', url: '/admin/session', headers: { host: HOST } })).json() as Record<string, unknown>;
    expect(signedOut.signed_in).toBe(false);
    expect(Object.keys(signedOut).sort()).toEqual(['external_models', 'in_folder', 'key_command', 'sign_in_command', 'signed_in', 'start_command']);
    // The commands name the data folder when it is not the default one, so they reach this server (it is
    // on the server's command line for this machine's users anyway); nothing else names a folder.
    const root = hearth.services.paths.root;
    const { sign_in_command: open, key_command: key, ...rest } = signedOut;
    expect([open, key]).toEqual([`npm run hearth -- open --data-dir ${root}`, `npm run hearth -- keys create --label browser --data-dir ${root}`]);
    expect(JSON.stringify(rest)).not.toContain(root);
    const app = await session();
    const signedIn = (await anonymous({ method: 'GET', url: '/admin/session', headers: { host: HOST, ...both(app) } })).json() as Record<string, unknown>;
    expect(signedIn.signed_in).toBe(true);
    expect(signedIn.models_dir).toBe(hearth.services.paths.models);
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
      const error = errorOf(await hearth.app.inject(asOwner({ method: 'GET', url: '/admin/status', headers: header })), 403);
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
