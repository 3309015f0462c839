import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkDocument } from '../../../companion/src/config/document.js';
import { familyOf } from '../../../companion/src/http/perimeter.js';
import type { ServerSettings } from '#shared/api/config.js';
import type { RouteScope } from '#shared/api/access.js';
import { ADMIN_CALLS } from '../../helpers/admin-calls.js';
import { asOwner, sharedApp } from '../../helpers/app.js';

/*
 * The perimeter, exercised through inject with forged socket peers and headers. inject's
 * defaults: remoteAddress 127.0.0.1 and Host localhost:80, so the companion's own origin is
 * http://localhost:80. The app is not listening, so it counts as bound to loopback.
 */

const hearth = sharedApp({ withModel: false, resetConfig: true });

const REMOTE = ['203.0.113.7', '10.0.0.2', '192.168.1.20', '::ffff:198.51.100.4', '2001:db8::1'];
const OWN_ORIGIN = 'http://localhost:80';

afterEach(() => {
  vi.useRealTimers();
});

/** Puts a server section in force the way an apply would (validated, defaults filled in). */
function setServer(
  server: Partial<Omit<ServerSettings, 'auth' | 'cors' | 'limits'>> & {
    auth?: { required: boolean };
    cors?: { origins: string[] };
    limits?: Partial<ServerSettings['limits']>;
  },
): void {
  const { document, problems } = checkDocument({
    ...structuredClone(hearth.baseline),
    server: { ...structuredClone(hearth.baseline.server), ...server, limits: { ...hearth.baseline.server.limits, ...server.limits } },
  });
  expect(problems).toEqual([]);
  hearth.services.reconfigure(document!);
}

function newKey(options: { scopes?: RouteScope[]; agent?: string; expiresAt?: number } = {}): { id: string; key: string } {
  const created = hearth.services.keys.create({ label: `perimeter ${Math.random()}`, ...options });
  return { id: created.id, key: created.key };
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

let peers = 0;
/** A fresh loopback peer address, so failed authentications in one check never rate-limit another. */
function freshPeer(): string {
  peers += 1;
  return `127.1.${Math.floor(peers / 250)}.${(peers % 250) + 1}`;
}

async function call(options: InjectOptions): Promise<LightMyRequestResponse> {
  return hearth.app.inject(options);
}

function expectError(response: LightMyRequestResponse, status: number, code: string): { message: string; type: string; code: string; param: string | null } {
  expect(response.statusCode, response.body).toBe(status);
  const body = response.json() as { error: { message: string; type: string; code: string; param: string | null } };
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  return body.error;
}

describe('familyOf', () => {
  it('maps each path to the key scope it needs', () => {
    const table: [string, string][] = [
      ['/admin/status', 'admin'],
      ['/admin/config/export', 'admin'],
      ['/admin', 'admin'],
      ['/v1/models', 'inference'],
      ['/v1/chat/completions', 'inference'],
      ['/v1/responses', 'inference'],
      ['/v1/images/generations', 'images'],
      ['/v1/images/models', 'images'],
      ['/agents', 'agents'],
      ['/agents/helper/run', 'agents'],
      ['/mcp/tools', 'tools'],
      ['/mcp/call', 'tools'],
      ['/mcp', 'tools'],
      ['/memory/ingest', 'memory'],
      ['/memory/agents/:agent_id/facts', 'memory'],
      ['/agents/approvals', 'admin'],
      ['/agents/approvals/:approval_id', 'admin'],
      ['/agents/approvalsx', 'agents'],
      ['/v1/media/jobs', 'images'],
      ['/health', 'public'],
      ['/pair', 'public'],
      // The app's pages: /memory is the Memory screen, the memory routes are below /memory/.
      ['/memory', 'web'],
      ['/', 'web'],
      ['/chat', 'web'],
      ['/healthz', 'web'],
      ['/administrator', 'web'],
      ['/agentsmith', 'web'],
    ];
    for (const [path, family] of table) expect(familyOf(path), path).toBe(family);
  });
});

describe('Host header (DNS-rebinding defence) while bound to loopback', () => {
  it('accepts names that can only mean this machine', async () => {
    for (const host of [
      'localhost',
      'localhost:4777',
      '127.0.0.1:4777',
      '127.8.9.10',
      '[::1]:4777',
      '[::1]',
      'hearth.app.localhost:4777',
      'LOCALHOST:4777',
      '[::ffff:127.0.0.1]:4777',
    ]) {
      const response = await call({ method: 'GET', url: '/health', headers: { host } });
      expect(response.statusCode, host).toBe(200);
    }
  });

  it('refuses any other name on every family, admin included', async () => {
    const hosts = [
      'evil.example',
      'evil.example:4777',
      '0.0.0.0:4777',
      '192.168.1.5:4777',
      'localhost.evil.example',
      '127.0.0.1.evil.example',
      '[2001:db8::1]:4777',
      'localhost:80:90',
    ];
    for (const host of hosts) {
      for (const url of ['/health', '/v1/models', '/admin/status', '/agents', '/mcp/tools', '/memory/ingest', '/']) {
        const error = expectError(await call({ method: 'GET', url, headers: { host } }), 403, 'host_not_allowed');
        expect(error.message).toContain(host);
      }
    }
  });

  it('refuses a rebinding page even when it also presents a valid key and an allowed origin', async () => {
    setServer({ cors: { origins: ['http://evil.example:4777'] } });
    const { key } = newKey();
    expectError(
      await call({ method: 'GET', url: '/v1/models', headers: { host: 'evil.example:4777', origin: 'http://evil.example:4777', ...bearer(key) } }),
      403,
      'host_not_allowed',
    );
  });

  it('accepts names listed in server.allowed_hosts on the non-admin families', async () => {
    setServer({ allowed_hosts: ['hearth.lan'] });
    expect((await call({ method: 'GET', url: '/v1/models', headers: { host: 'hearth.lan:4777' } })).statusCode).toBe(200);
    expect((await call({ method: 'GET', url: '/health', headers: { host: 'hearth.lan' } })).statusCode).toBe(200);
    expectError(await call({ method: 'GET', url: '/health', headers: { host: 'other.lan' } }), 403, 'host_not_allowed');
  });

  it('still requires a loopback Host on admin routes when server.allowed_hosts names another host (DESIGN §3)', async () => {
    setServer({ allowed_hosts: ['hearth.lan'] });
    expectError(await call(asOwner({ method: 'GET', url: '/admin/status', headers: { host: 'hearth.lan:4777' } })), 403, 'host_not_allowed');
  });
});

describe('Host header while bound beyond loopback', () => {
  let restore: () => void;

  beforeAll(() => {
    // Pretend the listener is on 0.0.0.0 without opening a socket beyond loopback.
    const original = hearth.app.server.address.bind(hearth.app.server);
    hearth.app.server.address = () => ({ address: '0.0.0.0', family: 'IPv4', port: 4777 });
    restore = () => {
      hearth.app.server.address = original;
    };
  });

  afterAll(() => restore());

  it('accepts any Host on the non-admin families (the machine is reachable by its LAN names)', async () => {
    const response = await call({ method: 'GET', url: '/health', headers: { host: '192.168.1.5:4777' } });
    expect(response.statusCode).toBe(200);
  });

  it('still refuses a non-loopback Host on admin routes, even from a loopback peer', async () => {
    expectError(await call(asOwner({ method: 'GET', url: '/admin/status', headers: { host: '192.168.1.5:4777' } })), 403, 'host_not_allowed');
    expect((await call(asOwner({ method: 'GET', url: '/admin/status', headers: { host: '127.0.0.1:4777' } }))).statusCode).toBe(200);
  });
});

describe('admin routes: loopback socket peer only', () => {
  it('answers loopback peers: IPv4 127/8, ::1 and IPv4-mapped loopback', async () => {
    for (const remoteAddress of ['127.0.0.1', '127.0.0.2', '::1', '::ffff:127.0.0.1']) {
      const response = await call(asOwner({ method: 'GET', url: '/admin/status', remoteAddress }));
      expect(response.statusCode, remoteAddress).toBe(200);
    }
  });

  it('refuses every admin route from a non-loopback peer, with no side effect', async () => {
    const keysBefore = hearth.services.keys.list().length;
    const configBefore = JSON.stringify(hearth.services.config);
    for (const remoteAddress of REMOTE) {
      for (const options of ADMIN_CALLS) {
        const error = expectError(await call({ ...options, remoteAddress }), 403, 'permission_denied');
        expect(error.message).toMatch(/loopback/);
      }
    }
    expect(hearth.services.keys.list()).toHaveLength(keysBefore);
    expect(JSON.stringify(hearth.services.config)).toBe(configBefore);
  });

  it('never lets X-Forwarded-For and similar headers vouch for a peer, and refuses a loopback peer that is a proxy', async () => {
    const forged = { 'x-forwarded-for': '127.0.0.1', 'x-real-ip': '127.0.0.1', forwarded: 'for=127.0.0.1', 'x-forwarded-host': 'localhost' };
    for (const remoteAddress of REMOTE) {
      expectError(await call(asOwner({ method: 'GET', url: '/admin/status', remoteAddress, headers: forged })), 403, 'permission_denied');
    }
    // A loopback peer that forwards for someone else is a proxy: its client is not on this machine.
    const proxied = await call(asOwner({ method: 'GET', url: '/admin/status', headers: { 'x-forwarded-for': '203.0.113.7', forwarded: 'for=203.0.113.7' } }));
    expectError(proxied, 403, 'permission_denied');
  });

  it('a valid key never lifts the rule, whatever its scopes, with or without auth required', async () => {
    const { key } = newKey();
    for (const required of [false, true]) {
      setServer({ auth: { required } });
      for (const remoteAddress of REMOTE) {
        for (const options of ADMIN_CALLS) {
          expectError(await call({ ...options, remoteAddress, headers: { ...bearer(key), 'x-forwarded-for': '127.0.0.1' } }), 403, 'permission_denied');
        }
      }
    }
  });

  it('needs no key from loopback even when auth is required', async () => {
    setServer({ auth: { required: true } });
    expect((await call(asOwner({ method: 'GET', url: '/admin/keys' }))).statusCode).toBe(200);
  });

  it('refuses a foreign Origin, even one configured for CORS, and the "null" origin', async () => {
    setServer({ cors: { origins: ['http://hearth.app.example', '*'] } });
    for (const origin of ['http://hearth.app.example', 'http://evil.example', 'null', 'http://127.0.0.1:80', 'https://localhost:80']) {
      expectError(await call(asOwner({ method: 'GET', url: '/admin/status', headers: { origin } })), 403, 'origin_not_allowed');
      expectError(
        await call(
          asOwner({ method: 'POST', url: '/admin/config/apply', headers: { origin }, payload: { document: { version: 1 }, confirm_high_risk: true } }),
        ),
        403,
        'origin_not_allowed',
      );
      const preflight = await call(asOwner({ method: 'OPTIONS', url: '/admin/config/apply', headers: { origin, 'access-control-request-method': 'POST' } }));
      expectError(preflight, 403, 'origin_not_allowed');
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it("accepts the companion's own origin (its web UI)", async () => {
    const response = await call(asOwner({ method: 'GET', url: '/admin/status', headers: { origin: OWN_ORIGIN } }));
    expect(response.statusCode).toBe(200);
    const ipv4 = await call(asOwner({ method: 'GET', url: '/admin/status', headers: { host: '127.0.0.1:4777', origin: 'http://127.0.0.1:4777' } }));
    expect(ipv4.statusCode).toBe(200);
  });

  it('cannot be reached through a percent-encoded path that the router decodes', async () => {
    // The router decodes %61 to "a" and serves /admin/keys; the perimeter must see the same path.
    for (const url of ['/%61dmin/keys', '/%61dmin/config/export', '/adm%69n/status']) {
      const response = await call({ method: 'GET', url, remoteAddress: '203.0.113.7' });
      expect(response.statusCode, `${url}: ${response.body.slice(0, 200)}`).toBe(403);
    }
    const created = await call({ method: 'POST', url: '/%61dmin/keys', remoteAddress: '203.0.113.7', payload: { label: 'backdoor' } });
    expect(created.statusCode, created.body.slice(0, 200)).toBe(403);
  });
});

describe('CORS', () => {
  it('by default refuses every origin but its own, on requests and preflights', async () => {
    for (const origin of ['http://evil.example', 'null', 'http://localhost:5173']) {
      const response = await call({ method: 'GET', url: '/v1/models', headers: { origin } });
      expectError(response, 403, 'origin_not_allowed');
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
      const preflight = await call({
        method: 'OPTIONS',
        url: '/v1/chat/completions',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
      });
      expectError(preflight, 403, 'origin_not_allowed');
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('needs no CORS headers for its own origin or for clients that send no Origin', async () => {
    const own = await call({ method: 'GET', url: '/v1/models', headers: { origin: OWN_ORIGIN } });
    expect(own.statusCode).toBe(200);
    expect(own.headers['access-control-allow-origin']).toBeUndefined();
    const none = await call({ method: 'GET', url: '/v1/models' });
    expect(none.statusCode).toBe(200);
    expect(none.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers a configured origin with that origin and Vary: Origin, never with credentials', async () => {
    setServer({ cors: { origins: ['http://hearth.app.example', 'https://chat.example:8443'] } });
    for (const origin of ['http://hearth.app.example', 'https://chat.example:8443']) {
      const response = await call({ method: 'GET', url: '/v1/models', headers: { origin } });
      expect(response.statusCode).toBe(200);
      expect(response.headers['access-control-allow-origin']).toBe(origin);
      expect(String(response.headers.vary)).toMatch(/origin/i);
      expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    }
    expectError(await call({ method: 'GET', url: '/v1/models', headers: { origin: 'http://hearth.app.example:8080' } }), 403, 'origin_not_allowed');
    expectError(await call({ method: 'GET', url: '/v1/models', headers: { origin: 'https://hearth.app.example' } }), 403, 'origin_not_allowed');
  });

  it('answers a configured origin’s preflight with 204 and the methods and headers a client needs', async () => {
    setServer({ cors: { origins: ['http://hearth.app.example'] }, auth: { required: true } });
    const preflight = await call({
      method: 'OPTIONS',
      url: '/v1/chat/completions',
      headers: {
        origin: 'http://hearth.app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, x-service-agent-id',
      },
    });
    // No key on a preflight: browsers never send credentials with it.
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('http://hearth.app.example');
    expect(String(preflight.headers.vary)).toMatch(/origin/i);
    expect(String(preflight.headers['access-control-allow-methods'])).toMatch(/POST/);
    const allowed = String(preflight.headers['access-control-allow-headers']).toLowerCase();
    for (const header of ['authorization', 'content-type', 'x-service-agent-id']) expect(allowed).toContain(header);
    expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('lets a configured origin read an auth error (the error carries the CORS headers)', async () => {
    setServer({ cors: { origins: ['http://hearth.app.example'] }, auth: { required: true } });
    const response = await call({ method: 'GET', url: '/v1/models', headers: { origin: 'http://hearth.app.example' } });
    expectError(response, 401, 'invalid_api_key');
    expect(response.headers['access-control-allow-origin']).toBe('http://hearth.app.example');
  });

  it('answers "*" with "*" and never with Access-Control-Allow-Credentials', async () => {
    setServer({ cors: { origins: ['*'] } });
    for (const origin of ['http://anything.example', 'null']) {
      const response = await call({ method: 'GET', url: '/v1/models', headers: { origin } });
      expect(response.statusCode).toBe(200);
      expect(response.headers['access-control-allow-origin']).toBe('*');
      expect(response.headers['access-control-allow-credentials']).toBeUndefined();
      const preflight = await call({ method: 'OPTIONS', url: '/v1/chat/completions', headers: { origin, 'access-control-request-method': 'POST' } });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('*');
      expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
    }
  });

  it('a preflight from the own origin or without an Origin is answered 204 without CORS headers', async () => {
    for (const headers of [{ origin: OWN_ORIGIN }, {}]) {
      const preflight = await call({ method: 'OPTIONS', url: '/v1/chat/completions', headers: { ...headers, 'access-control-request-method': 'POST' } });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    }
  });
});

describe('keys with auth off (the loopback default)', () => {
  it('lets requests without a key through', async () => {
    expect((await call({ method: 'GET', url: '/v1/models' })).statusCode).toBe(200);
  });

  it('ignores tokens that are not Hearth keys: OpenAI clients always send one', async () => {
    for (const authorization of ['Bearer sk-not-a-hearth-key', 'Bearer ollama', 'Bearer lm-studio', 'Basic dXNlcjpwYXNz', 'Bearer ']) {
      const response = await call({ method: 'GET', url: '/v1/models', headers: { authorization } });
      expect(response.statusCode, authorization).toBe(200);
    }
  });

  it('verifies a presented Hearth key: an unknown one is 401', async () => {
    const error = expectError(
      await call({ method: 'GET', url: '/v1/models', remoteAddress: freshPeer(), headers: bearer('hth_definitelyNotAKey') }),
      401,
      'invalid_api_key',
    );
    expect(error.message).not.toContain('hth_definitelyNotAKey');
  });

  it("applies a presented key's scopes", async () => {
    const { key } = newKey({ scopes: ['inference'] });
    expect((await call({ method: 'GET', url: '/v1/models', headers: bearer(key) })).statusCode).toBe(200);
    expectError(await call({ method: 'GET', url: '/agents', headers: bearer(key) }), 403, 'permission_denied');
  });
});

describe('keys with auth required', () => {
  const familyRoutes: [RouteScope, InjectOptions][] = [
    ['inference', { method: 'GET', url: '/v1/models' }],
    ['inference', { method: 'POST', url: '/v1/chat/completions', payload: { model: 'nope', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 } }],
    ['agents', { method: 'GET', url: '/agents' }],
    ['agents', { method: 'POST', url: '/agents/helper/run', payload: {} }],
    ['tools', { method: 'GET', url: '/mcp/tools' }],
    ['tools', { method: 'POST', url: '/mcp/call', payload: { name: 'x', arguments: {} } }],
    ['memory', { method: 'POST', url: '/memory/ingest', payload: {} }],
    ['images', { method: 'GET', url: '/v1/images/models' }],
    ['images', { method: 'POST', url: '/v1/images/generations', payload: {} }],
  ];

  it('answers 401 invalid_api_key for a missing key or a token that is not a Hearth key, on every protected family', async () => {
    setServer({ auth: { required: true } });
    for (const [, options] of familyRoutes) {
      for (const headers of [{}, { authorization: 'Bearer sk-openai-style' }, { authorization: 'Basic dXNlcjpwYXNz' }]) {
        const response = await call({ ...options, remoteAddress: freshPeer(), headers });
        const error = expectError(response, 401, 'invalid_api_key');
        expect(response.json().error.type).toBe('authentication_error');
        expect(error.message).toMatch(/key/i);
      }
    }
  });

  it('keeps public routes public', async () => {
    setServer({ auth: { required: true } });
    expect((await call({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  });

  it('answers 401 for an invalid, an expired and a revoked key, and says which', async () => {
    setServer({ auth: { required: true } });
    vi.useFakeTimers({ toFake: ['Date'] });
    const now = Date.now();
    const expiring = newKey({ expiresAt: now + 60_000 });
    const revoked = newKey();
    hearth.services.keys.revoke(revoked.id);
    // Valid until its expiry.
    expect((await call({ method: 'GET', url: '/v1/models', remoteAddress: freshPeer(), headers: bearer(expiring.key) })).statusCode).toBe(200);
    vi.setSystemTime(now + 60_001);
    const expired = expectError(
      await call({ method: 'GET', url: '/v1/models', remoteAddress: freshPeer(), headers: bearer(expiring.key) }),
      401,
      'invalid_api_key',
    );
    expect(expired.message).toMatch(/expired/);
    const gone = expectError(
      await call({ method: 'GET', url: '/v1/models', remoteAddress: freshPeer(), headers: bearer(revoked.key) }),
      401,
      'invalid_api_key',
    );
    expect(gone.message).toMatch(/revoked/);
    const unknown = expectError(
      await call({ method: 'GET', url: '/v1/models', remoteAddress: freshPeer(), headers: bearer(`${expiring.key.slice(0, -2)}xx`) }),
      401,
      'invalid_api_key',
    );
    expect(unknown.message).toMatch(/not a valid key/);
  });

  it('answers 403 permission_denied for a valid key outside its route families, and lets it through inside them', async () => {
    setServer({ auth: { required: true } });
    const scopes: RouteScope[] = ['inference', 'agents', 'tools', 'memory', 'images'];
    for (const scope of scopes) {
      const { key } = newKey({ scopes: [scope] });
      for (const [family, options] of familyRoutes) {
        const response = await call({ ...options, headers: bearer(key) });
        if (family === scope) {
          expect([401, 403, 429], `${scope} key on ${options.url}: ${response.body.slice(0, 200)}`).not.toContain(response.statusCode);
        } else {
          const error = expectError(response, 403, 'permission_denied');
          expect(response.json().error.type).toBe('permission_error');
          expect(error.message).toContain(family);
        }
      }
    }
  });

  it('a key scoped to one agent may not act for another, via the path or via X-Service-Agent-Id', async () => {
    setServer({ auth: { required: true } });
    const { key } = newKey({ agent: 'helper' });
    const viaPath = expectError(await call({ method: 'POST', url: '/agents/other/run', headers: bearer(key), payload: {} }), 403, 'permission_denied');
    expect(viaPath.message).toContain('helper');
    expect(viaPath.param).toBe('id');
    const encoded = await call({ method: 'POST', url: '/agents/oth%65r/run', headers: bearer(key), payload: {} });
    expectError(encoded, 403, 'permission_denied');
    const viaHeader = expectError(
      await call({ method: 'GET', url: '/v1/models', headers: { ...bearer(key), 'x-service-agent-id': 'other' } }),
      403,
      'permission_denied',
    );
    expect(viaHeader.param).toBe('X-Service-Agent-Id');
    // Both at once, and a header naming its own agent while the path names another.
    expectError(
      await call({ method: 'POST', url: '/agents/other/run', headers: { ...bearer(key), 'x-service-agent-id': 'helper' }, payload: {} }),
      403,
      'permission_denied',
    );
    // Its own agent passes the perimeter.
    expect((await call({ method: 'GET', url: '/v1/models', headers: { ...bearer(key), 'x-service-agent-id': 'helper' } })).statusCode).toBe(200);
    const own = await call({ method: 'POST', url: '/agents/helper/run', headers: bearer(key), payload: {} });
    expect([401, 403]).not.toContain(own.statusCode);
  });

  it('X-Service-Agent-Id is attribution only: it grants nothing', async () => {
    setServer({ auth: { required: true } });
    expectError(
      await call({ method: 'GET', url: '/v1/models', remoteAddress: freshPeer(), headers: { 'x-service-agent-id': 'helper' } }),
      401,
      'invalid_api_key',
    );
    // A key for any agent may name any agent.
    const { key } = newKey();
    expect((await call({ method: 'GET', url: '/v1/models', headers: { ...bearer(key), 'x-service-agent-id': 'whoever' } })).statusCode).toBe(200);
  });

  it('records the last use of a key', async () => {
    setServer({ auth: { required: true } });
    const { id, key } = newKey();
    expect(hearth.services.keys.list().find((entry) => entry.id === id)!.last_used_at).toBeNull();
    expect((await call({ method: 'GET', url: '/v1/models', headers: bearer(key) })).statusCode).toBe(200);
    expect(hearth.services.keys.list().find((entry) => entry.id === id)!.last_used_at).not.toBeNull();
  });

  it('cannot be bypassed through a percent-encoded path that the router decodes', async () => {
    setServer({ auth: { required: true } });
    // %76 is "v": the router serves /v1/models for this path.
    for (const url of ['/%761/models', '/v%31/models']) {
      const response = await call({ method: 'GET', url, remoteAddress: freshPeer() });
      expect(response.statusCode, `${url}: ${response.body.slice(0, 200)}`).toBe(401);
    }
    const { key } = newKey({ scopes: ['memory'] });
    const outOfScope = await call({ method: 'GET', url: '/%761/models', headers: bearer(key) });
    expect(outOfScope.statusCode, outOfScope.body.slice(0, 200)).toBe(403);
  });
});

describe('repeated authentication failures', () => {
  it('are slowed down per address: 429 with Retry-After after five, other addresses unaffected, allowed again after the window', async () => {
    setServer({ auth: { required: true } });
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = Date.now();
    const attacker = '198.51.100.77';
    // Off loopback the Host check still applies; a loopback Host keeps it out of the way here.
    for (let attempt = 1; attempt <= 5; attempt++) {
      vi.setSystemTime(start + attempt * 1000);
      expectError(await call({ method: 'GET', url: '/v1/models', remoteAddress: attacker, headers: bearer(`hth_guess${attempt}`) }), 401, 'invalid_api_key');
    }
    vi.setSystemTime(start + 6000);
    const limited = await call({ method: 'GET', url: '/v1/models', remoteAddress: attacker, headers: bearer('hth_guess6') });
    expectError(limited, 429, 'rate_limit_exceeded');
    expect(limited.json().error.type).toBe('rate_limit_error');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    // The oldest failure (at +1 s) ages out of the 60 s window at +61 s: 55 s from +6 s.
    expect(retryAfter).toBe(55);

    // X-Forwarded-For does not launder the address.
    expectError(
      await call({ method: 'GET', url: '/v1/models', remoteAddress: attacker, headers: { ...bearer('hth_guess7'), 'x-forwarded-for': '203.0.113.99' } }),
      429,
      'rate_limit_exceeded',
    );
    // Another address still gets plain 401s.
    expectError(await call({ method: 'GET', url: '/v1/models', remoteAddress: '198.51.100.78', headers: bearer('hth_other') }), 401, 'invalid_api_key');

    vi.setSystemTime(start + 61_001);
    const { key } = newKey();
    expect((await call({ method: 'GET', url: '/v1/models', remoteAddress: attacker, headers: bearer(key) })).statusCode).toBe(200);
  });

  it('never lock out a valid key: five bad keys from one address do not deny a good one from it (verified first)', async () => {
    setServer({ auth: { required: true } });
    const shared = '198.51.100.99';
    for (let attempt = 1; attempt <= 5; attempt++) {
      expectError(await call({ method: 'GET', url: '/v1/models', remoteAddress: shared, headers: bearer(`hth_bad${attempt}`) }), 401, 'invalid_api_key');
    }
    expectError(await call({ method: 'GET', url: '/v1/models', remoteAddress: shared, headers: bearer('hth_bad6') }), 429, 'rate_limit_exceeded');
    const { key } = newKey();
    const valid = await call({ method: 'GET', url: '/v1/models', remoteAddress: shared, headers: bearer(key) });
    expect(valid.statusCode, valid.body).toBe(200);
    expect(valid.headers['retry-after']).toBeUndefined();
    // Failures are still slowed down after the success.
    expectError(await call({ method: 'GET', url: '/v1/models', remoteAddress: shared, headers: bearer('hth_bad7') }), 429, 'rate_limit_exceeded');
  });

  it('also count invalid Hearth keys when auth is off', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const attacker = '198.51.100.88';
    for (let attempt = 1; attempt <= 5; attempt++) {
      expectError(await call({ method: 'GET', url: '/v1/models', remoteAddress: attacker, headers: bearer(`hth_guess${attempt}`) }), 401, 'invalid_api_key');
    }
    const limited = await call({ method: 'GET', url: '/v1/models', remoteAddress: attacker, headers: bearer('hth_guess6') });
    expectError(limited, 429, 'rate_limit_exceeded');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});

describe('concurrent requests per key', () => {
  it('counts only open requests: sequential requests never hit a cap of 1', async () => {
    setServer({ limits: { streams_per_key: 1 } });
    const { key } = newKey();
    for (let index = 0; index < 4; index++) {
      expect((await call({ method: 'GET', url: '/v1/models', headers: bearer(key) })).statusCode).toBe(200);
    }
  });
});
