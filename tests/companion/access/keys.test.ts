import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { KeyStore, KEY_PREFIX } from '../../../companion/src/access/keys.js';
import { FailureLimiter } from '../../../companion/src/access/failures.js';
import { HearthError } from '../../../companion/src/errors.js';
import { openDatabase, type Db } from '../../../companion/src/store/database.js';
import type { AccessKeyRecord, CreatedKey } from '#shared/api/access.js';
import { asOwner, sharedApp, testApp } from '../../helpers/app.js';
import { runHearth } from '../../helpers/hearth-cli.js';

const ALL_SCOPES = ['agents', 'images', 'inference', 'memory', 'tools'];

function caught(action: () => unknown): HearthError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(HearthError);
    return error as HearthError;
  }
  throw new Error('expected a HearthError');
}

describe('KeyStore', () => {
  let folder: string;
  let db: Db;
  let keys: KeyStore;

  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), 'hearth-keys-'));
    db = openDatabase(join(folder, 'hearth.db'));
    keys = new KeyStore(db);
  });

  afterAll(() => {
    db.close();
    rmSync(folder, { recursive: true, force: true });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('creates random hth_ keys, shown once: only a SHA-256 hash and a short prefix are stored', () => {
    const first = keys.create({ label: 'laptop' });
    const second = keys.create({ label: 'laptop' });
    expect(first.key.startsWith(KEY_PREFIX)).toBe(true);
    expect(first.key).toMatch(/^hth_[A-Za-z0-9_-]{43}$/);
    expect(first.key).not.toBe(second.key);
    expect(first.id).not.toBe(second.id);
    expect(first.key.startsWith(first.prefix)).toBe(true);
    expect(first.prefix.length).toBeLessThan(16);
    const row = db.prepare('SELECT * FROM access_keys WHERE id = ?').get(first.id) as Record<string, unknown>;
    expect(row.hash).toBe(createHash('sha256').update(first.key).digest('hex'));
    // The key itself is nowhere in the database.
    const dump = JSON.stringify(db.prepare('SELECT * FROM access_keys').all());
    expect(dump).not.toContain(first.key);
    expect(dump).not.toContain(first.key.slice(KEY_PREFIX.length + 6));
    // Listing never shows the key or its hash.
    const listed = JSON.stringify(keys.list());
    expect(listed).not.toContain(first.key);
    expect(listed).not.toContain(String(row.hash));
    for (const record of keys.list())
      expect(Object.keys(record).sort()).toEqual(['agent', 'created_at', 'expires_at', 'id', 'label', 'last_used_at', 'prefix', 'revoked_at', 'scopes']);
  });

  it('defaults to every API route scope (metrics only when asked for) and no agent; given scopes are de-duplicated and sorted', () => {
    const plain = keys.create({ label: 'plain' });
    expect(plain.scopes).toEqual(ALL_SCOPES);
    expect(keys.create({ label: 'prometheus', scopes: ['metrics'] }).scopes).toEqual(['metrics']);
    expect(plain.agent).toBeNull();
    expect(plain.expires_at).toBeNull();
    expect(plain.revoked_at).toBeNull();
    expect(plain.last_used_at).toBeNull();
    const scoped = keys.create({ label: '  scoped  ', scopes: ['tools', 'inference', 'tools'], agent: 'helper' });
    expect(scoped.scopes).toEqual(['inference', 'tools']);
    expect(scoped.agent).toBe('helper');
    expect(scoped.label).toBe('scoped');
    const none = keys.create({ label: 'nothing', scopes: [] });
    expect(none.scopes).toEqual([]);
  });

  it('refuses an empty label and an expiry that is not in the future', () => {
    expect(caught(() => keys.create({ label: '   ' })).param).toBe('label');
    expect(caught(() => keys.create({ label: 'x', expiresAt: Date.now() - 1 })).param).toBe('expires_at');
    expect(caught(() => keys.create({ label: 'x', expiresAt: Date.now() })).code).toBe('invalid_request_error');
  });

  it('verifies: ok with the grant, unknown, revoked, expired (at its expiry instant)', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const now = Date.now();
    const created = keys.create({ label: 'short-lived', scopes: ['inference'], agent: 'helper', expiresAt: now + 1000 });
    expect(keys.verify(created.key)).toEqual({ ok: true, grant: { id: created.id, agent: 'helper', scopes: ['inference'] } });
    expect(keys.verify(created.key, now + 999).ok).toBe(true);
    expect(keys.verify(created.key, now + 1000)).toEqual({ ok: false, reason: 'expired' });
    vi.setSystemTime(now + 5000);
    expect(keys.verify(created.key)).toEqual({ ok: false, reason: 'expired' });
    expect(keys.verify(`${created.key}x`)).toEqual({ ok: false, reason: 'unknown' });
    expect(keys.verify('')).toEqual({ ok: false, reason: 'unknown' });
    expect(keys.verify(created.prefix)).toEqual({ ok: false, reason: 'unknown' });

    const revoked = keys.create({ label: 'revoked' });
    keys.revoke(revoked.id);
    expect(keys.verify(revoked.key)).toEqual({ ok: false, reason: 'revoked' });
  });

  it('records the last use on a successful verification only', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const created = keys.create({ label: 'used' });
    const revoked = keys.create({ label: 'unused' });
    keys.revoke(revoked.id);
    const at = Date.now() + 12_345;
    keys.verify(created.key, at);
    keys.verify(revoked.key, at);
    const listed = keys.list();
    expect(listed.find((entry) => entry.id === created.id)!.last_used_at).toBe(new Date(at).toISOString());
    expect(listed.find((entry) => entry.id === revoked.id)!.last_used_at).toBeNull();
  });

  it('revokes at once and idempotently; an unknown id is key_not_found', () => {
    const created = keys.create({ label: 'to revoke' });
    const revoked = keys.revoke(created.id);
    expect(revoked.revoked_at).not.toBeNull();
    const again = keys.revoke(created.id);
    expect(again.revoked_at).toBe(revoked.revoked_at);
    const error = caught(() => keys.revoke('key_doesnotexist'));
    expect(error.code).toBe('key_not_found');
    expect(error.status).toBe(404);
  });

  it('counts active keys: neither revoked nor expired', () => {
    const fresh = new KeyStore(db);
    const now = Date.now();
    const before = fresh.activeCount(now);
    const beforeLater = fresh.activeCount(now + 10_000);
    const expiring = fresh.create({ label: 'expiring', expiresAt: now + 10_000 });
    const revoked = fresh.create({ label: 'revoked' });
    fresh.create({ label: 'active' });
    fresh.revoke(revoked.id);
    expect(fresh.activeCount(now)).toBe(before + 2);
    expect(fresh.activeCount(now + 10_000)).toBe(beforeLater + 1);
    expect(expiring.expires_at).toBe(new Date(now + 10_000).toISOString());
  });
});

describe('FailureLimiter', () => {
  it('allows five failures per address per minute, then says how long to wait', () => {
    const limiter = new FailureLimiter();
    for (let index = 0; index < 5; index++) {
      expect(limiter.waitSeconds('a', 1000 + index)).toBe(0);
      limiter.record('a', 1000 + index);
    }
    expect(limiter.waitSeconds('a', 1005)).toBe(60);
    expect(limiter.waitSeconds('a', 31_000)).toBe(30);
    expect(limiter.waitSeconds('a', 60_999)).toBe(1);
    expect(limiter.waitSeconds('a', 61_000)).toBe(0);
    expect(limiter.waitSeconds('b', 1005)).toBe(0);
  });
});

describe('/admin/keys', () => {
  const hearth = sharedApp({ withModel: false });

  afterEach(() => {
    vi.useRealTimers();
  });

  async function create(body: Record<string, unknown>): Promise<CreatedKey> {
    const response = await hearth.app.inject(asOwner({ method: 'POST', url: '/admin/keys', payload: body }));
    expect(response.statusCode, response.body).toBe(201);
    expect(response.headers['cache-control']).toBe('no-store');
    return response.json() as CreatedKey;
  }

  async function list(): Promise<AccessKeyRecord[]> {
    const response = await hearth.app.inject(asOwner({ method: 'GET', url: '/admin/keys' }));
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { data: AccessKeyRecord[] }).data;
  }

  it('creates, lists (without the key) and revokes a key, with immediate effect', async () => {
    const created = await create({ label: 'editor plugin', scopes: ['inference', 'agents'], agent: 'helper' });
    expect(created.key).toMatch(/^hth_/);
    expect(created).toMatchObject({
      label: 'editor plugin',
      scopes: ['agents', 'inference'],
      agent: 'helper',
      expires_at: null,
      revoked_at: null,
      last_used_at: null,
    });
    expect(hearth.services.keys.verify(created.key).ok).toBe(true);

    const listed = await list();
    const entry = listed.find((record) => record.id === created.id)!;
    expect(entry).toBeDefined();
    expect(entry).not.toHaveProperty('key');
    expect(entry.last_used_at).not.toBeNull(); // the verify above used it
    expect(JSON.stringify(listed)).not.toContain(created.key);

    const revoked = await hearth.app.inject(asOwner({ method: 'DELETE', url: `/admin/keys/${created.id}` }));
    expect(revoked.statusCode).toBe(200);
    expect((revoked.json() as AccessKeyRecord).revoked_at).not.toBeNull();
    expect(hearth.services.keys.verify(created.key)).toEqual({ ok: false, reason: 'revoked' });
    expect((await list()).find((record) => record.id === created.id)!.revoked_at).not.toBeNull();
    const usedAfter = await hearth.app.inject({ method: 'GET', url: '/v1/models', headers: { authorization: `Bearer ${created.key}` } });
    expect(usedAfter.statusCode).toBe(401);
  });

  it('computes expires_at from expires_in_days, or takes expires_at as given', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const now = Date.now();
    const inDays = await create({ label: 'week', expires_in_days: 7 });
    expect(inDays.expires_at).toBe(new Date(now + 7 * 86_400_000).toISOString());
    const at = new Date(now + 3_600_000).toISOString();
    const given = await create({ label: 'hour', expires_at: at });
    expect(given.expires_at).toBe(at);
    vi.setSystemTime(now + 3_600_001);
    expect(hearth.services.keys.verify(given.key)).toEqual({ ok: false, reason: 'expired' });
    expect(hearth.services.keys.verify(inDays.key).ok).toBe(true);
  });

  it('refuses invalid requests with 400 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'label'],
      [{ label: '' }, 'label'],
      [{ label: '   ' }, 'label'],
      [{ label: 'x', scopes: ['admin'] }, 'scopes[0]'],
      [{ label: 'x', scopes: ['inference', 'inference'] }, 'scopes'],
      [{ label: 'x', agent: 'has spaces' }, 'agent'],
      [{ label: 'x', expires_at: 'tomorrow' }, 'expires_at'],
      [{ label: 'x', expires_at: new Date(Date.now() - 60_000).toISOString() }, 'expires_at'],
      [{ label: 'x', expires_in_days: 0 }, 'expires_in_days'],
      [{ label: 'x', expires_in_days: -1 }, 'expires_in_days'],
      [{ label: 'x', expires_in_days: 1, expires_at: new Date(Date.now() + 86_400_000).toISOString() }, 'expires_in_days'],
      [{ label: 'x', key: 'hth_chosen_by_the_client' }, 'key'],
    ];
    const before = hearth.services.keys.list().length;
    for (const [body, param] of cases) {
      const response = await hearth.app.inject(asOwner({ method: 'POST', url: '/admin/keys', payload: body }));
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().error.param, JSON.stringify(body)).toBe(param);
    }
    expect(hearth.services.keys.list()).toHaveLength(before);
  });

  it('revoking an unknown id is 404 key_not_found', async () => {
    const response = await hearth.app.inject(asOwner({ method: 'DELETE', url: '/admin/keys/key_0123456789abcdef' }));
    expect(response.statusCode).toBe(404);
    expect(response.json().error.code).toBe('key_not_found');
  });

  it('refuses key management from a non-loopback peer even with a valid key', async () => {
    const { key, id } = hearth.services.keys.create({ label: 'remote' });
    const headers = { authorization: `Bearer ${key}`, 'x-forwarded-for': '127.0.0.1' };
    const responses = [
      await hearth.app.inject(asOwner({ method: 'POST', url: '/admin/keys', remoteAddress: '203.0.113.5', headers, payload: { label: 'sneaky' } })),
      await hearth.app.inject(asOwner({ method: 'GET', url: '/admin/keys', remoteAddress: '203.0.113.5', headers })),
      await hearth.app.inject(asOwner({ method: 'DELETE', url: `/admin/keys/${id}`, remoteAddress: '203.0.113.5', headers })),
    ];
    for (const response of responses) {
      expect(response.statusCode).toBe(403);
      expect(response.json().error.code).toBe('permission_denied');
    }
    expect(hearth.services.keys.list().some((record) => record.label === 'sneaky')).toBe(false);
    expect(hearth.services.keys.verify(key).ok).toBe(true);
  });
});

describe('/admin/keys with an out-of-range expiry', () => {
  it('answers 400 rather than storing a key that nobody can see and that breaks listing', async () => {
    // Its own app: if the key is stored anyway, listing breaks for everything after it.
    const { app, services, close } = await testApp({ withModel: false });
    try {
      const response = await app.inject(asOwner({ method: 'POST', url: '/admin/keys', payload: { label: 'forever', expires_in_days: 1e9 } }));
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json().error.param).toBe('expires_in_days');
      // Whatever happened, listing keys keeps working and no unusable key was left behind.
      const listing = await app.inject(asOwner({ method: 'GET', url: '/admin/keys' }));
      expect(listing.statusCode, listing.body).toBe(200);
      expect(services.db.prepare('SELECT COUNT(*) AS n FROM access_keys').get()).toEqual({ n: 0 });
    } finally {
      await close();
    }
  });
});

describe('hearth keys (CLI)', () => {
  let dataDir: string;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'hearth-keys-cli-'));
  });

  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  const keysCli = (...args: string[]) => runHearth(['keys', ...args, '--data-dir', dataDir]);

  function store<T>(use: (keys: KeyStore) => T): T {
    const db = openDatabase(join(dataDir, 'hearth.db'));
    try {
      return use(new KeyStore(db));
    } finally {
      db.close();
    }
  }

  it('create prints exactly the key on stdout and the details on stderr; list and revoke manage it', async () => {
    const empty = await keysCli('list');
    expect(empty.code).toBe(0);
    expect(empty.stdout).toMatch(/No access keys/);

    const created = await keysCli(
      'create',
      '--label',
      'my editor',
      '--agent',
      'helper',
      '--scope',
      'inference',
      '--scope',
      'agents,tools',
      '--expires-in-days',
      '30',
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^hth_[A-Za-z0-9_-]{43}\n$/);
    const key = created.stdout.trim();
    expect(created.stderr).toMatch(/only time the key is shown/);
    expect(created.stderr).toContain('agent helper');
    expect(created.stderr).not.toContain(key);

    const grant = store((keys) => keys.verify(key));
    expect(grant.ok).toBe(true);
    if (!grant.ok) return;
    expect(grant.grant).toMatchObject({ agent: 'helper', scopes: ['agents', 'inference', 'tools'] });
    const record = store((keys) => keys.list()).find((entry) => entry.id === grant.grant.id)!;
    const days = (Date.parse(record.expires_at!) - Date.parse(record.created_at)) / 86_400_000;
    expect(Math.abs(days - 30)).toBeLessThan(1e-6);

    const listed = await keysCli('list');
    expect(listed.code).toBe(0);
    const line = listed.stdout.split('\n').find((entry) => entry.startsWith(grant.grant.id))!;
    expect(line).toMatch(/active/);
    expect(line).toContain('my editor');
    expect(line).toContain('agent=helper');
    expect(line).toContain('last-used=');
    expect(listed.stdout).not.toContain(key);

    const revoked = await keysCli('revoke', grant.grant.id);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`Revoked ${grant.grant.id}`);
    expect(store((keys) => keys.verify(key))).toEqual({ ok: false, reason: 'revoked' });
    expect((await keysCli('list')).stdout.split('\n').find((entry) => entry.startsWith(grant.grant.id))).toMatch(/revoked/);
  });

  it('says what is wrong with exit 2 for usage errors and exit 1 for an unknown key id', async () => {
    const noLabel = await keysCli('create');
    expect(noLabel.code).toBe(2);
    expect(noLabel.stderr).toMatch(/--label is required/);
    expect(noLabel.stdout).toBe('');
    const metrics = await keysCli('create', '--label', 'prometheus', '--scope', 'metrics');
    expect(metrics.code, metrics.stderr).toBe(0);
    expect(metrics.stderr).toContain('scopes: metrics');
    const badScope = await keysCli('create', '--label', 'x', '--scope', 'admin');
    expect(badScope.code).toBe(2);
    expect(badScope.stderr).toMatch(/Unknown scope admin/);
    expect(badScope.stdout).toBe('');
    const badDays = await keysCli('create', '--label', 'x', '--expires-in-days', 'soon');
    expect(badDays.code).toBe(2);
    expect(badDays.stdout).toBe('');
    const unknown = await keysCli('revoke', 'key_nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/key_nope/);
    const nothing = await keysCli('frobnicate');
    expect(nothing.code).toBe(2);
    // None of the refused commands created a key.
    expect(store((keys) => keys.list()).filter((entry) => entry.label === 'x')).toEqual([]);
  });
});
