import { afterEach, describe, expect, it, vi } from 'vitest';
import { accessChange, accessFormFrom, normaliseOrigin, originProblem, problemText, restartText, riskText } from '$lib/settings/server-access';
import { ServerAccessStore } from '$lib/stores/server-access.svelte';
import type { ServerSettings } from '#shared/api/config.js';
import { stubFetch } from '../helpers/fetch-stub.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

const server = (overrides: Partial<ServerSettings> = {}): ServerSettings =>
  ({ host: '127.0.0.1', port: 4777, auth: { required: false }, cors: { origins: [] }, allowed_hosts: [], ...overrides }) as ServerSettings;

describe('the access settings form', () => {
  it('reads the exposure from the address and writes the change as a configuration document', () => {
    expect(accessFormFrom(server()).exposure).toBe('loopback');
    expect(accessFormFrom(server({ host: '0.0.0.0' })).exposure).toBe('network');
    expect(accessFormFrom(server({ host: '192.168.1.5' }))).toMatchObject({ exposure: 'other', host: '192.168.1.5' });
    const form = { ...accessFormFrom(server()), exposure: 'network' as const, requireKeys: true, origins: ['http://localhost:5173'] };
    expect(accessChange(form)).toEqual({ version: 1, server: { host: '0.0.0.0', auth: { required: true }, cors: { origins: ['http://localhost:5173'] } } });
    expect(accessChange({ ...form, exposure: 'other', host: '192.168.1.5' })).toMatchObject({ server: { host: '192.168.1.5' } });
  });

  it('checks a web page address before adding it', () => {
    expect(normaliseOrigin(' HTTP://LocalHost:5173/ ')).toBe('http://localhost:5173');
    expect(originProblem('http://localhost:5173', [])).toBeNull();
    expect(originProblem('*', [])).toBeNull();
    expect(originProblem('http://localhost:5173/app', [])).toMatch(/^Write only the scheme, the host and the port/);
    expect(originProblem('localhost:5173', [])).toMatch(/^Write only the scheme/);
    expect(originProblem('', [])).toMatch(/^Type the address/);
    expect(originProblem('http://localhost:5173/', ['http://localhost:5173'])).toBe('http://localhost:5173 is already allowed.');
  });

  it("puts the companion's refusals, risks and restarts in words, without setting names", () => {
    const form = { ...accessFormFrom(server()), exposure: 'network' as const };
    const texts = [
      problemText({ path: 'server.auth.required', message: 'must be true to listen on 0.0.0.0, beyond loopback' }).text,
      problemText({ path: 'server.host', message: 'listening beyond loopback (0.0.0.0) needs at least one access key first (hearth keys create)' }).text,
      problemText({ path: 'server.cors.origins[0]', message: 'must be "*" or an origin such as http://localhost:5173 (no path)' }).text,
      riskText({ level: 'high', code: 'listen_beyond_loopback', path: 'server.host', message: 'The server would listen on 0.0.0.0.' }, form, 4777),
      riskText({ level: 'high', code: 'auth_disabled', path: 'server.auth.required', message: 'Access keys would no longer be required.' }, form, 4777),
      riskText(
        { level: 'high', code: 'cors_widened', path: 'server.cors.origins', message: 'Web pages from http://a.example could call Hearth from a browser.' },
        form,
        4777,
      ),
      riskText({ level: 'high', code: 'cors_widened', path: 'server.cors.origins', message: 'Web pages from * could call Hearth from a browser.' }, form, 4777),
      restartText(['server.host'])!,
      problemText({ path: 'server.auth.required', message: 'cannot be turned on while no access key exists: every program would be refused' }).text,
    ];
    expect(texts[0]).toMatch(/only when an access key is required: tick “Require an access key”/);
    expect(texts[1]).toBe('Other machines can be let in only with an access key, and none exists yet. Create one under Access keys below, then save again.');
    // What to do is in the app: no command to run in a terminal.
    expect(problemText({ path: 'server.host', message: 'needs at least one access key first' }).command).toBeUndefined();
    expect(texts[8]).toMatch(/^An access key can be required only once one exists: otherwise every program, this app too, would be shut out\./);
    expect(texts[3]).toBe(
      "Other machines on your networks could reach Hearth at this computer's addresses, port 4777. They need an access key to use it; managing Hearth stays possible on this machine only.",
    );
    expect(texts[5]).toBe('Web pages from http://a.example could call Hearth from a browser.');
    expect(texts[6]).toBe('Any web page open in a browser on this machine could call Hearth.');
    expect(texts[7]).toBe('Saved. The new address takes effect when Hearth starts again.');
    for (const text of texts) expect(text).not.toMatch(/server\.|auth\.required|cors|listen_beyond_loopback|confirm_high_risk|\/admin/);
    expect(restartText(['memory.model'])).toBeNull();
  });
});

/** The configuration routes with the companion's exposure rule: beyond loopback only with keys required and a key to use. */
function companion(options: { keys: number; host?: string }) {
  const config = { version: 1, server: server({ host: options.host ?? '127.0.0.1' }) };
  const keys: { id: string; label: string; scopes: string[]; revoked_at: null; expires_at: null; created_at: string }[] = Array.from(
    { length: options.keys },
    (_, index) => ({
      id: `key_${index}`,
      label: `key ${index}`,
      scopes: ['inference'],
      revoked_at: null,
      expires_at: null,
      created_at: '2026-01-01T00:00:00Z',
    }),
  );
  const applied: { document: { server: Partial<ServerSettings> }; confirm_high_risk: boolean }[] = [];
  const planFor = (change: { server: ServerSettings }) => {
    const next = { ...config.server, ...change.server };
    const problems = [];
    if (next.auth.required && !config.server.auth.required && keys.length === 0 && next.host === '127.0.0.1')
      problems.push({ path: 'server.auth.required', message: 'cannot be turned on while no access key exists' });
    if (next.host !== '127.0.0.1') {
      if (!next.auth.required) problems.push({ path: 'server.auth.required', message: `must be true to listen on ${next.host}, beyond loopback` });
      else if (keys.length === 0)
        problems.push({ path: 'server.host', message: `listening beyond loopback (${next.host}) needs at least one access key first (hearth keys create)` });
    }
    const risks =
      next.host !== config.server.host && next.host !== '127.0.0.1'
        ? [{ level: 'high', code: 'listen_beyond_loopback', path: 'server.host', message: `The server would listen on ${next.host}.` }]
        : [];
    return { problems, risks, restart: next.host !== config.server.host ? ['server.host'] : [], next };
  };
  const refused = (problems: unknown[]) =>
    Response.json(
      { error: { message: 'The configuration document has problems', type: 'invalid_request_error', code: 'config_invalid', param: 'document', problems } },
      { status: 400 },
    );
  stubFetch(async (path, init) => {
    const body = init.body ? JSON.parse(String(init.body)) : undefined;
    if (path === '/admin/config/export?format=json') return Response.json(structuredClone(config));
    if (path === '/admin/keys' && init.method === 'POST') {
      const key = { id: `key_${keys.length}`, label: body.label, scopes: body.scopes, revoked_at: null, expires_at: null, created_at: '2026-01-02T00:00:00Z' };
      keys.push(key);
      return Response.json({ ...key, key: `hth_${'k'.repeat(43)}` }, { status: 201 });
    }
    if (path === '/admin/keys') return Response.json({ data: keys });
    if (path === '/agents') return Response.json({ object: 'list', data: [] });
    if (path === '/health') return Response.json({ status: 'ok', version: 'test' });
    if (path === '/v1/models') return Response.json({ object: 'list', data: [] });
    if (path === '/admin/config/plan' || path === '/admin/config/apply') {
      const planned = planFor(body.document);
      if (planned.problems.length) return refused(planned.problems);
      const plan = { valid: true, changes: [], risks: planned.risks, restart_required: planned.restart, reload_required: [], warnings: [] };
      if (path === '/admin/config/plan') return Response.json(plan);
      applied.push(body);
      if (planned.risks.length && !body.confirm_high_risk)
        return Response.json(
          { error: { message: 'This change is high-risk', type: 'invalid_request_error', code: 'confirmation_required', param: null, risks: planned.risks } },
          { status: 409 },
        );
      config.server = planned.next;
      return Response.json({ ...plan, applied: true });
    }
    return Response.json({ error: { message: `no route ${path}`, type: 'invalid_request_error', code: 'route_not_found', param: null } }, { status: 404 });
  });
  return { config, applied, keys };
}

describe('ServerAccessStore', () => {
  it('asks before letting other machines in, then applies and says a restart is needed', async () => {
    const state = companion({ keys: 1 });
    const store = new ServerAccessStore();
    await store.refresh();
    expect(store.form).toMatchObject({ exposure: 'loopback', requireKeys: false });
    store.setExposure('network');
    // The companion insists on keys beyond loopback: choosing the network ticks them.
    expect(store.form!.requireKeys).toBe(true);
    expect(store.changed).toBe(true);
    await store.save();
    // Requiring keys is asked first: a key exists, but this browser has none saved.
    expect(store.enabling).toEqual({ anyKey: true, browserKey: false });
    expect(store.risks).toBeNull();
    await store.requireKeys(false);
    expect(store.enabling).toBeNull();
    expect(state.applied).toEqual([]);
    expect(store.risks).toEqual([expect.stringMatching(/^Other machines on your networks could reach Hearth/)]);
    await store.confirm();
    expect(state.applied).toEqual([expect.objectContaining({ confirm_high_risk: true })]);
    expect(state.config.server).toMatchObject({ host: '0.0.0.0', auth: { required: true } });
    expect(store.risks).toBeNull();
    expect(store.notice).toMatch(/^Saved\. The new address takes effect when Hearth starts again/);
    expect(store.changed).toBe(false);
  });

  it('shows the refusal in words when keys are not required or none exists, and applies nothing', async () => {
    const state = companion({ keys: 0 });
    const store = new ServerAccessStore();
    await store.refresh();
    store.setExposure('network');
    store.form!.requireKeys = false;
    await store.save();
    expect(store.risks).toBeNull();
    expect(store.problems).toEqual([{ text: expect.stringMatching(/only when an access key is required/) }]);
    store.form!.requireKeys = true;
    store.edited();
    await store.save();
    // No key exists: nothing is planned, and the only ways on make a key first.
    expect(store.enabling).toEqual({ anyKey: false, browserKey: false });
    expect(store.problems).toEqual([]);
    expect(state.applied).toEqual([]);
    expect(state.config.server.host).toBe('127.0.0.1');
    // Past the app, the companion still refuses it.
    await store.requireKeys(false);
    expect(store.problems).toEqual([{ text: expect.stringMatching(/^Other machines can be let in only with an access key, and none exists yet/) }]);
    expect(state.applied).toEqual([]);
  });

  it('adds and removes allowed web pages, and saves a change without risk at once', async () => {
    const state = companion({ keys: 0 });
    const store = new ServerAccessStore();
    await store.refresh();
    store.newOrigin = 'http://localhost:5173/path';
    expect(store.addOrigin()).toBe(false);
    expect(store.originError).toMatch(/^Write only the scheme/);
    store.newOrigin = 'http://localhost:5173/';
    expect(store.addOrigin()).toBe(true);
    expect(store.form!.origins).toEqual(['http://localhost:5173']);
    expect(store.newOrigin).toBe('');
    store.removeOrigin('http://localhost:5173');
    expect(store.changed).toBe(false);
    store.form!.requireKeys = true;
    await store.save();
    expect(store.enabling).toEqual({ anyKey: false, browserKey: false });
    expect(state.applied).toEqual([]);
    // A key for this browser in the same step: created, saved here, then keys are required.
    await store.requireKeys(true);
    expect(state.keys).toEqual([
      expect.objectContaining({ label: expect.stringMatching(/^This browser/), scopes: ['inference', 'agents', 'tools', 'memory', 'images'] }),
    ]);
    expect(localStorage.getItem('hearth.access-key')).toBe(`hth_${'k'.repeat(43)}`);
    expect(state.applied).toEqual([expect.objectContaining({ confirm_high_risk: false })]);
    expect(store.notice).toBe('Saved. It applies now.');
    localStorage.clear();
  });
});
