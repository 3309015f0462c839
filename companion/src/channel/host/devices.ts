import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { HearthError } from '../../errors.js';
import type { Db } from '../../store/database.js';
import type { DeviceRecord } from '#shared/api/remote.js';

/** A code lives five minutes, and twenty failed attempts (from all clients together) burn it. */
export const CODE_LIFETIME_MS = 5 * 60_000;
export const CODE_TRIES = 20;

// Crockford's base32: no I, L, O, U, so a code read aloud or typed is unambiguous.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

interface DeviceRow {
  id: string;
  name: string;
  fingerprint: string;
  agents_json: string;
  created_at: number;
  last_seen_at: number | null;
  revoked_at: number | null;
}

interface CodeRow {
  id: string;
  hash: string;
  agents_json: string;
  expires_at: number;
  failures: number;
  used_at: number | null;
}

/** A paired device as the channel sees it on each request. */
export interface Device {
  id: string;
  name: string;
  agents: string[];
}

/**
 * Paired devices and one-time pairing codes, in SQLite. A code is stored only as a hash, is
 * redeemed at most once, expires after five minutes, and is burned after CODE_TRIES failed
 * attempts (a failed attempt cannot say which code it was aimed at, so it counts against every
 * live one). The channel limits each client's failures first (ChannelHost.pair), far below
 * CODE_TRIES, so no single client can burn the codes meant for others.
 */
export class DeviceStore {
  private readonly byFingerprint;
  private readonly touch;

  constructor(
    private readonly db: Db,
    private readonly clock: () => number = Date.now,
  ) {
    this.byFingerprint = db.prepare<[string], DeviceRow>('SELECT * FROM remote_devices WHERE fingerprint = ? AND revoked_at IS NULL');
    this.touch = db.prepare('UPDATE remote_devices SET last_seen_at = ? WHERE id = ?');
  }

  /** A new code granting `agents`; the code is returned this once. */
  createCode(agents: string[]): { code: string; expiresAt: number } {
    const now = this.clock();
    const raw = Array.from({ length: 8 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
    const expiresAt = now + CODE_LIFETIME_MS;
    this.db
      .prepare('INSERT INTO pairing_codes (id, hash, agents_json, created_at, expires_at) VALUES (?, ?, ?, ?, ?)')
      .run(`pair_${randomBytes(8).toString('hex')}`, digest(raw), JSON.stringify([...new Set(agents)].sort()), now, expiresAt);
    return { code: `${raw.slice(0, 4)}-${raw.slice(4)}`, expiresAt };
  }

  /**
   * Redeems a code and records the device. `issue` makes the device's certificate; when it
   * throws (a malformed request), nothing is stored and the code stays usable. `failed` hears a
   * refused code synchronously, before this returns, so a caller counting failures per client
   * has counted this one before any other request is looked at.
   */
  redeem(
    presented: string,
    name: string,
    issue: (deviceId: string) => Promise<{ certificate: string; fingerprint: string }>,
    failed: () => void = () => undefined,
  ): Promise<{ deviceId: string; certificate: string; agents: string[] }> {
    const now = this.clock();
    const hash = digest(normaliseCode(presented));
    const row = this.db.prepare<[string], CodeRow>('SELECT * FROM pairing_codes WHERE hash = ?').get(hash);
    const matches = row !== undefined && timingSafeEqual(Buffer.from(row.hash, 'hex'), Buffer.from(hash, 'hex'));
    const refuse = (message: string) => {
      failed();
      return Promise.reject(new HearthError('pairing_failed', `${message} make a new one on the host with: hearth devices pair`));
    };
    if (!matches) {
      this.db.prepare('UPDATE pairing_codes SET failures = failures + 1 WHERE used_at IS NULL AND expires_at > ? AND failures < ?').run(now, CODE_TRIES);
      return refuse('This pairing code is not valid. Check it, or');
    }
    if (row.used_at !== null) return refuse('This pairing code has already been used:');
    if (row.expires_at <= now) return refuse('This pairing code has expired (codes last 5 minutes):');
    if (row.failures >= CODE_TRIES) return refuse(`This pairing code was burned after ${CODE_TRIES} failed attempts:`);
    return this.spend(row, name, issue);
  }

  private async spend(row: CodeRow, name: string, issue: (deviceId: string) => Promise<{ certificate: string; fingerprint: string }>) {
    // Sign first (a malformed request leaves the code usable); spending and recording are one
    // transaction, so of two requests racing with one code only one pairs.
    const deviceId = `dev_${randomBytes(8).toString('hex')}`;
    const issued = await issue(deviceId);
    const agents = JSON.parse(row.agents_json) as string[];
    this.db.transaction(() => {
      const spent = this.db.prepare('UPDATE pairing_codes SET used_at = ?, device_id = ? WHERE id = ? AND used_at IS NULL').run(this.clock(), deviceId, row.id);
      if (spent.changes === 0)
        throw new HearthError('pairing_failed', 'This pairing code has already been used. Make a new one on the host with: hearth devices pair');
      this.db
        .prepare('INSERT INTO remote_devices (id, name, fingerprint, agents_json, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(deviceId, name.trim().slice(0, 100) || deviceId, issued.fingerprint, row.agents_json, this.clock());
    })();
    return { deviceId, certificate: issued.certificate, agents };
  }

  /** The active device holding the certificate with this fingerprint, if any; records that it was seen. */
  deviceFor(fingerprint: string): Device | undefined {
    const row = this.byFingerprint.get(fingerprint);
    if (!row) return undefined;
    this.touch.run(this.clock(), row.id);
    return { id: row.id, name: row.name, agents: JSON.parse(row.agents_json) as string[] };
  }

  list(connections: (deviceId: string) => number): DeviceRecord[] {
    return this.db
      .prepare<[], DeviceRow>('SELECT * FROM remote_devices ORDER BY created_at, id')
      .all()
      .map((row) => toRecord(row, connections(row.id)));
  }

  /** Revokes a device; its certificate is refused from now on. */
  /** Records that a device started this run (it may read and cancel it from then on). */
  claimRun(deviceId: string, runId: string): void {
    this.db.prepare('INSERT INTO remote_device_runs (run_id, device_id) VALUES (?, ?)').run(runId, deviceId);
  }

  ownsRun(deviceId: string, runId: string): boolean {
    return this.db.prepare('SELECT 1 FROM remote_device_runs WHERE run_id = ? AND device_id = ?').get(runId, deviceId) !== undefined;
  }

  /** Whether an agent's conversation holds anything this device did not start (a local run, another device's, an attributed exchange). */
  foreignConversation(deviceId: string, agentId: string, conversationId: string): boolean {
    const foreign = this.db
      .prepare(
        `SELECT 1 FROM agent_runs WHERE agent_id = @agent AND conversation_id = @conversation
           AND id NOT IN (SELECT run_id FROM remote_device_runs WHERE device_id = @device)
         UNION ALL
         SELECT 1 FROM agent_messages WHERE agent_id = @agent AND conversation_id = @conversation AND run_id IS NULL
         LIMIT 1`,
      )
      .get({ agent: agentId, conversation: conversationId, device: deviceId });
    return foreign !== undefined;
  }

  revoke(id: string): DeviceRecord {
    this.db.prepare('UPDATE remote_devices SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(this.clock(), id);
    const row = this.db.prepare<[string], DeviceRow>('SELECT * FROM remote_devices WHERE id = ?').get(id);
    if (!row) throw new HearthError('device_not_found', `No paired device has the id "${id}". List them with: hearth devices list`, { param: 'id' });
    return toRecord(row, 0);
  }
}

/** Upper case, no separators, and the letters people confuse with digits mapped as Crockford does. */
export function normaliseCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
}

function digest(code: string): string {
  return createHash('sha256').update(code).digest('hex');
}

function toRecord(row: DeviceRow, connections: number): DeviceRecord {
  return {
    id: row.id,
    name: row.name,
    agents: JSON.parse(row.agents_json) as string[],
    fingerprint: row.fingerprint,
    created_at: new Date(row.created_at).toISOString(),
    last_seen_at: row.last_seen_at === null ? null : new Date(row.last_seen_at).toISOString(),
    revoked_at: row.revoked_at === null ? null : new Date(row.revoked_at).toISOString(),
    connections,
  };
}
