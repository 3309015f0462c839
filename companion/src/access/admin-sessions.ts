import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../store/database.js';
import { SignInRequests } from './sign-in-requests.js';

/** Every session secret starts with this, so the log's redaction knows it even unseen. */
export const SESSION_PREFIX = 'hses_';

/** A session not used for this long ends by itself. */
export const SESSION_IDLE_DAYS = 30;
/** However much it is used, a session ends this long after sign-in. */
export const SESSION_MAX_DAYS = 365;

const DAY_MS = 86_400_000;
/** Last use is written at most this often (a page makes several admin requests a second). */
const TOUCH_EVERY_MS = 60_000;

/** A new session: the cookie's value, and the proof the app keeps in its own origin's storage. */
export interface StartedSession {
  cookie: string;
  proof: string;
  expiresAt: number;
}

interface Row {
  id: string;
  proof: string;
  created_at: number;
  last_used_at: number;
  expires_at: number;
}

/**
 * The app's admin sessions, kept in the database as digests. A session is two random secrets:
 * an HttpOnly cookie and a proof the app sends as a header from its own origin's storage. A
 * cookie alone proves nothing: cookies are shared by every port of 127.0.0.1, so a page another
 * local user serves there can make the browser send it to their server, but that page cannot
 * read this origin's storage. Rows are keyed with the admin token, so a new token ends them all.
 */
export class AdminSessions {
  /** Browsers on this machine asking a signed-in browser to let them in (each approved one then starts a session here). */
  readonly requests = new SignInRequests();
  private readonly byId;
  private readonly insert;
  private readonly touch;
  private readonly remove;

  constructor(
    private readonly db: Db,
    private readonly key: string,
  ) {
    this.byId = db.prepare<[string], Row>('SELECT * FROM admin_sessions WHERE id = ?');
    this.insert = db.prepare('INSERT INTO admin_sessions (id, proof, created_at, last_used_at, expires_at) VALUES (?, ?, ?, ?, ?)');
    this.touch = db.prepare('UPDATE admin_sessions SET last_used_at = ?, expires_at = ? WHERE id = ?');
    this.remove = db.prepare('DELETE FROM admin_sessions WHERE id = ?');
    db.prepare('DELETE FROM admin_sessions WHERE expires_at <= ?').run(Date.now());
  }

  start(now = Date.now()): StartedSession {
    const cookie = SESSION_PREFIX + randomBytes(32).toString('base64url');
    const proof = SESSION_PREFIX + randomBytes(32).toString('base64url');
    const expiresAt = now + SESSION_IDLE_DAYS * DAY_MS;
    this.insert.run(this.idOf(cookie), digest(proof), now, now, expiresAt);
    return { cookie, proof, expiresAt };
  }

  /** Whether the cookie and the proof are one live session's; using it keeps it alive. */
  accepts(cookie: string, proof: string, now = Date.now()): boolean {
    const row = this.live(cookie, proof, now);
    if (!row) return false;
    if (now - row.last_used_at >= TOUCH_EVERY_MS) {
      this.touch.run(now, Math.min(now + SESSION_IDLE_DAYS * DAY_MS, row.created_at + SESSION_MAX_DAYS * DAY_MS), row.id);
    }
    return true;
  }

  /** Ends the session of this cookie and proof; false when there was none. */
  end(cookie: string, proof: string, now = Date.now()): boolean {
    const row = this.live(cookie, proof, now);
    if (!row) return false;
    this.remove.run(row.id);
    return true;
  }

  /** Ends every session ("sign out everywhere"); answers how many there were. */
  endAll(now = Date.now()): number {
    return this.db.prepare('DELETE FROM admin_sessions WHERE expires_at > ?').run(now).changes;
  }

  /** How many sessions are live. */
  count(now = Date.now()): number {
    return (this.db.prepare('SELECT count(*) AS count FROM admin_sessions WHERE expires_at > ?').get(now) as { count: number }).count;
  }

  private live(cookie: string, proof: string, now: number): Row | undefined {
    if (!cookie.startsWith(SESSION_PREFIX) || !proof.startsWith(SESSION_PREFIX) || cookie.length > 200 || proof.length > 200) return undefined;
    const row = this.byId.get(this.idOf(cookie));
    if (!row || row.expires_at <= now) return undefined;
    return timingSafeEqual(Buffer.from(digest(proof)), Buffer.from(row.proof)) ? row : undefined;
  }

  private idOf(cookie: string): string {
    return createHmac('sha256', this.key).update(cookie).digest('hex');
  }
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
