/**
 * Whether this browser is signed in to the companion's admin routes. The session itself is an
 * HttpOnly cookie the page cannot read; this is the page's own note of it, set when a sign-in
 * link was redeemed and cleared when the companion refuses the session. Screens that need the
 * admin routes (downloads, live activity) ask only while it is set, so a browser that never
 * signed in sends no request that would be refused.
 */
const KEY = 'hearth.admin-signed-in';

const read = () => {
  try {
    return globalThis.localStorage?.getItem(KEY) === '1';
  } catch {
    return false;
  }
};

export const SIGN_IN_HINT = 'Sign in to manage the companion: run `hearth open` on the machine it runs on and open the link it prints.';

export class SessionStore {
  signedIn = $state(read());

  /** A sign-in link was redeemed. */
  markSignedIn(): void {
    this.signedIn = true;
    globalThis.localStorage?.setItem(KEY, '1');
  }

  /** The companion refused the session (expired, signed out, another data folder). */
  markSignedOut(): void {
    this.signedIn = false;
    globalThis.localStorage?.removeItem(KEY);
  }

  /** Follows sign-ins and sign-outs in other tabs; returns the stop function. */
  watch(): () => void {
    const changed = (event: StorageEvent) => {
      if (event.key === KEY || event.key === null) this.signedIn = read();
    };
    window.addEventListener('storage', changed);
    return () => window.removeEventListener('storage', changed);
  }
}

export const session = new SessionStore();
