import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { HearthError } from '../errors.js';

/** How long a browser's request to be signed in waits for a signed-in browser's approval. */
export const SIGN_IN_REQUEST_MINUTES = 5;

/** At most this many requests wait at once; another is refused until one ends (another local user can ask too). */
export const MAX_WAITING_REQUESTS = 8;

/** An approved request is kept this long past its expiry at most, for the asking browser's next look. */
const PICK_UP_MS = 60_000;

/** Letters and digits nobody confuses (no 0/O, 1/I/L). */
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 6;

export type SignInRequestState = 'waiting' | 'approved' | 'refused' | 'expired';

interface Entry {
  id: string;
  /** sha256 of the asking browser's secret: only that browser can pick up the session. */
  secret: string;
  code: string;
  askedAt: number;
  expiresAt: number;
  state: 'waiting' | 'approved' | 'refused';
}

/** A started request: the secret the asking browser keeps, and the code it shows. */
export interface StartedRequest {
  secret: string;
  code: string;
  expiresAt: number;
}

/** A waiting request as a signed-in browser sees it: never its code (the person reads that off the asking browser) nor its secret. */
export interface WaitingRequest {
  id: string;
  askedAt: number;
  expiresAt: number;
}

/**
 * Browsers on this machine that ask to be signed in by a browser that already is. The asking
 * browser shows a short code and keeps a random secret; the person types that code into the
 * signed-in browser, which approves it; the asking browser then picks up a session with its
 * secret. Anyone on the machine can ask (the admin routes are loopback-only, and the app's own
 * origin only), but a request is approved only with the code shown on the asking screen, by a
 * signed-in browser, and only the holder of the secret gets the session. Kept in memory: a
 * restart drops every request.
 */
export class SignInRequests {
  private readonly entries = new Map<string, Entry>();

  /** A new request; refused while MAX_WAITING_REQUESTS wait. */
  start(now = Date.now()): StartedRequest {
    this.prune(now);
    const waiting = this.waiting(now);
    if (waiting.length >= MAX_WAITING_REQUESTS) {
      const soonest = Math.min(...waiting.map((entry) => entry.expiresAt));
      throw new HearthError(
        'rate_limit_exceeded',
        'Too many browsers are waiting to be signed in. Approve or refuse them in a signed-in browser (Server screen), or wait a few minutes.',
        { retryAfter: Math.max(1, Math.ceil((soonest - now) / 1000)) },
      );
    }
    const secret = randomBytes(32).toString('base64url');
    let code = newCode();
    while (waiting.some((entry) => entry.code === code)) code = newCode();
    const expiresAt = now + SIGN_IN_REQUEST_MINUTES * 60_000;
    const id = `sreq_${randomBytes(9).toString('base64url')}`;
    this.entries.set(id, { id, secret: digest(secret), code, askedAt: now, expiresAt, state: 'waiting' });
    return { secret, code, expiresAt };
  }

  /**
   * What became of the request of this secret. An approved one is answered once: the caller
   * starts the session, and the request is gone. A refused or expired one is answered once too.
   */
  look(secret: string, now = Date.now()): { state: SignInRequestState; expiresAt: number } {
    this.prune(now);
    const entry = this.bySecret(secret);
    if (!entry) {
      throw new HearthError('sign_in_request_not_found', 'This browser has no request to be signed in (it ended, or Hearth restarted). Ask again.');
    }
    const state: SignInRequestState = entry.state === 'waiting' && entry.expiresAt <= now ? 'expired' : entry.state;
    if (state !== 'waiting') this.entries.delete(entry.id);
    return { state, expiresAt: entry.expiresAt };
  }

  /** Approves the waiting request that shows this code (spaces, dashes and case do not matter). */
  approve(code: string, now = Date.now()): void {
    this.prune(now);
    const wanted = normalCode(code);
    const entry = this.waiting(now).find((candidate) => candidate.code === wanted);
    if (!entry) {
      throw new HearthError(
        'sign_in_request_not_found',
        `No browser is waiting to be signed in with this code. Check the code the other browser shows; a code works for ${SIGN_IN_REQUEST_MINUTES} minutes and is approved once.`,
        { param: 'code' },
      );
    }
    entry.state = 'approved';
  }

  /** Refuses a waiting request: the asking browser is told so. */
  refuse(id: string, now = Date.now()): void {
    const entry = this.entries.get(id);
    if (!entry || entry.state !== 'waiting' || entry.expiresAt <= now) {
      throw new HearthError('sign_in_request_not_found', 'No browser is waiting to be signed in with this request (it was decided, or it expired).', {
        param: 'id',
      });
    }
    entry.state = 'refused';
  }

  /** The requests that wait, oldest first. */
  list(now = Date.now()): WaitingRequest[] {
    this.prune(now);
    return this.waiting(now).map(({ id, askedAt, expiresAt }) => ({ id, askedAt, expiresAt }));
  }

  private waiting(now: number): Entry[] {
    return [...this.entries.values()].filter((entry) => entry.state === 'waiting' && entry.expiresAt > now);
  }

  private bySecret(secret: string): Entry | undefined {
    const wanted = Buffer.from(digest(secret));
    return [...this.entries.values()].find((entry) => timingSafeEqual(Buffer.from(entry.secret), wanted));
  }

  /** Forgets requests nobody came back for. */
  private prune(now: number): void {
    for (const [id, entry] of this.entries) if (entry.expiresAt + PICK_UP_MS <= now) this.entries.delete(id);
  }
}

function newCode(): string {
  return Array.from({ length: CODE_LENGTH }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join('');
}

function normalCode(code: string): string {
  return code.toUpperCase().replace(/[^A-Z0-9]/g, '');
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
