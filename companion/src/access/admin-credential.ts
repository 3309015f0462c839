import { chmodSync, closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { rememberSecret } from '../redaction.js';
import type { Db } from '../store/database.js';
import { writeFileAtomic } from '../store/files.js';
import { AdminSessions } from './admin-sessions.js';

/** Every admin credential starts with this, so it is never mistaken for an access key (hth_). */
export const ADMIN_TOKEN_PREFIX = 'hadm_';

/** How long a sign-in link works, if it is not used first. */
export const SIGN_IN_LINK_MINUTES = 15;

/** At most this many unused links are kept; making another drops the oldest. */
const MAX_OPEN_LINKS = 32;

/**
 * The local admin credential: a random token in `<data-dir>/admin-token` (mode 0600), created on
 * first start. Only the user who can read that file can use admin routes: the CLI sends the
 * token as a Bearer token, and the app gets a session of its own (random, stored as digests,
 * ended by signing out) through a one-time sign-in link. Deleting the file and restarting
 * replaces the token and ends every session.
 */
export class AdminCredential {
  readonly token: string;
  /** The app's sessions (a cookie and a proof each). */
  readonly sessions: AdminSessions;
  /** sha256(code) -> expiry time, for unused sign-in links. */
  private readonly links = new Map<string, number>();

  constructor(file: string, db: Db) {
    this.token = loadOrCreateToken(file);
    rememberSecret(this.token);
    this.sessions = new AdminSessions(db, this.token);
  }

  acceptsToken(presented: string): boolean {
    return sameSecret(presented, this.token);
  }

  /** Whether a session cookie and the app's proof are one live session's. */
  acceptsSession(cookie: string, proof: string): boolean {
    return this.sessions.accepts(cookie, proof);
  }

  /** A new one-time sign-in code, valid for SIGN_IN_LINK_MINUTES. */
  issueLink(now = Date.now()): { code: string; expiresAt: number } {
    for (const [hash, expiresAt] of this.links) if (expiresAt <= now) this.links.delete(hash);
    while (this.links.size >= MAX_OPEN_LINKS) this.links.delete(this.links.keys().next().value!);
    const code = randomBytes(32).toString('base64url');
    const expiresAt = now + SIGN_IN_LINK_MINUTES * 60_000;
    this.links.set(digest(code), expiresAt);
    return { code, expiresAt };
  }

  /** Uses up a sign-in code: true once for a code issued less than SIGN_IN_LINK_MINUTES ago. */
  redeem(code: string, now = Date.now()): boolean {
    const hash = digest(code);
    const expiresAt = this.links.get(hash);
    if (expiresAt === undefined) return false;
    this.links.delete(hash);
    return expiresAt > now;
  }
}

/** The token of a data directory, for the CLI; undefined when no server has started there yet. */
export function readAdminToken(file: string): string | undefined {
  try {
    const text = readFileSync(file, 'utf8').trim();
    return isToken(text) ? text : undefined;
  } catch {
    return undefined;
  }
}

function loadOrCreateToken(file: string): string {
  const token = ADMIN_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  try {
    // 'wx': of two processes starting at once, exactly one creates the file.
    const fd = openSync(file, 'wx', 0o600);
    try {
      writeSync(fd, `${token}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return token;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  chmodSync(file, 0o600);
  const existing = readAdminToken(file);
  if (existing) return existing;
  // An empty or damaged file: replace it (a token nobody can read back is no loss).
  writeFileAtomic(file, `${token}\n`, 0o600);
  return token;
}

function isToken(text: string): boolean {
  return /^[A-Za-z0-9_-]{32,200}$/.test(text);
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Compares in constant time (over fixed-length digests, so the length leaks nothing either). */
function sameSecret(presented: string, expected: string): boolean {
  return timingSafeEqual(createHash('sha256').update(presented).digest(), createHash('sha256').update(expected).digest());
}
