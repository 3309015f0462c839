import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { HearthError } from '../errors.js';
import type { Db } from '../store/database.js';
import { DEFAULT_KEY_SCOPES, type AccessKeyRecord, type CreatedKey, type RouteScope } from '#shared/api/access.js';

const MAX_LIFETIME_MS = 36500 * 86_400_000;

/** Every Hearth key starts with this, so a client sending another token is recognisable. */
export const KEY_PREFIX = 'hth_';

interface Row {
  id: string;
  label: string;
  hash: string;
  prefix: string;
  agent: string | null;
  scopes_json: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface KeyGrant {
  id: string;
  agent: string | null;
  scopes: RouteScope[];
}

export type Verification = { ok: true; grant: KeyGrant } | { ok: false; reason: 'unknown' | 'expired' | 'revoked' };

/** Access keys: random, shown once, stored as SHA-256 hashes, revocable with immediate effect. */
export class KeyStore {
  private readonly byHash;
  private readonly touch;

  constructor(private readonly db: Db) {
    this.byHash = db.prepare<[string], Row>('SELECT * FROM access_keys WHERE hash = ?');
    this.touch = db.prepare('UPDATE access_keys SET last_used_at = ? WHERE id = ?');
  }

  create(options: { label: string; agent?: string | null; scopes?: RouteScope[]; expiresAt?: number | null }): CreatedKey {
    const label = options.label.trim();
    if (!label) throw new HearthError('invalid_request_error', 'label must not be empty.', { param: 'label' });
    const scopes = [...new Set(options.scopes ?? DEFAULT_KEY_SCOPES)].sort() as RouteScope[];
    const expiresAt = options.expiresAt ?? null;
    if (expiresAt !== null && (!Number.isFinite(expiresAt) || expiresAt <= Date.now() || expiresAt > Date.now() + MAX_LIFETIME_MS)) {
      throw new HearthError('invalid_request_error', 'The expiry must be a valid time in the future, at most 100 years away.', { param: 'expires_at' });
    }
    const key = KEY_PREFIX + randomBytes(32).toString('base64url');
    const row: Row = {
      id: `key_${randomBytes(8).toString('hex')}`,
      label,
      hash: digest(key),
      prefix: key.slice(0, KEY_PREFIX.length + 6),
      agent: options.agent ?? null,
      scopes_json: JSON.stringify(scopes),
      created_at: Date.now(),
      expires_at: expiresAt,
      last_used_at: null,
      revoked_at: null,
    };
    this.db
      .prepare(
        'INSERT INTO access_keys (id, label, hash, prefix, agent, scopes_json, created_at, expires_at, last_used_at, revoked_at) VALUES (@id, @label, @hash, @prefix, @agent, @scopes_json, @created_at, @expires_at, @last_used_at, @revoked_at)',
      )
      .run(row);
    return { ...toRecord(row), key };
  }

  list(): AccessKeyRecord[] {
    return this.db.prepare<[], Row>('SELECT * FROM access_keys ORDER BY created_at, id').all().map(toRecord);
  }

  /** Active keys: not revoked and not expired. */
  activeCount(now = Date.now()): number {
    return (
      this.db.prepare('SELECT COUNT(*) AS n FROM access_keys WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)').get(now) as { n: number }
    ).n;
  }

  revoke(id: string): AccessKeyRecord {
    const result = this.db.prepare('UPDATE access_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(Date.now(), id);
    const row = this.db.prepare<[string], Row>('SELECT * FROM access_keys WHERE id = ?').get(id);
    if (!row) throw new HearthError('key_not_found', `No access key has the id "${id}".`, { param: 'id' });
    if (result.changes === 0 && row.revoked_at === null) throw new HearthError('internal_error');
    return toRecord(row);
  }

  /** Looks a presented key up by its hash and checks it in constant time. */
  verify(presented: string, now = Date.now()): Verification {
    const hash = digest(presented);
    const row = this.byHash.get(hash);
    if (!row || !timingSafeEqual(Buffer.from(row.hash, 'hex'), Buffer.from(hash, 'hex'))) return { ok: false, reason: 'unknown' };
    if (row.revoked_at !== null) return { ok: false, reason: 'revoked' };
    if (row.expires_at !== null && row.expires_at <= now) return { ok: false, reason: 'expired' };
    this.touch.run(now, row.id);
    return { ok: true, grant: { id: row.id, agent: row.agent, scopes: JSON.parse(row.scopes_json) as RouteScope[] } };
  }
}

function digest(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

function toRecord(row: Row): AccessKeyRecord {
  const iso = (value: number | null) => (value === null ? null : new Date(value).toISOString());
  return {
    id: row.id,
    label: row.label,
    prefix: row.prefix,
    agent: row.agent,
    scopes: JSON.parse(row.scopes_json) as RouteScope[],
    created_at: new Date(row.created_at).toISOString(),
    expires_at: iso(row.expires_at),
    last_used_at: iso(row.last_used_at),
    revoked_at: iso(row.revoked_at),
  };
}
