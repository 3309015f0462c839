/** Consecutive failed attempts after which automatic reconnection stops. */
export const MAX_ATTEMPTS = 8;
const MAX_WAIT_MS = 60_000;

/**
 * Reconnecting after failures: the failed attempts in a row, and the next try, waiting 1 s, 2 s,
 * 4 s ... up to a minute; after MAX_ATTEMPTS failures in a row it stops trying on its own.
 */
export class Backoff {
  /** Failed attempts since the last success (or the owner's reconnect). */
  attempts = 0;
  /** When the next try is due (ms since the epoch), or null when none is scheduled. */
  at: number | null = null;
  private timer?: NodeJS.Timeout;

  failed(): void {
    this.attempts += 1;
  }

  reset(): void {
    this.attempts = 0;
  }

  /** Schedules `retry` after the next wait; false (nothing scheduled) once the attempts are used up. */
  schedule(retry: () => void): boolean {
    if (this.attempts >= MAX_ATTEMPTS) return false;
    const delay = Math.min(1000 * 2 ** Math.max(0, this.attempts - 1), MAX_WAIT_MS);
    this.at = Date.now() + delay;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.at = null;
      retry();
    }, delay);
    this.timer.unref();
    return true;
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.at = null;
  }
}
