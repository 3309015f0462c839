/**
 * The companion access key, kept in this browser only: in the localStorage of the companion's
 * own origin (http://127.0.0.1:<port>), never in IndexedDB, a cookie or a URL.
 *
 * Why localStorage rather than the conversations' IndexedDB: `client.ts` reads the key
 * synchronously when it builds each request, so the first request after a load already carries
 * it (no start-up race, no cached copy to keep in step), and a key saved or forgotten in another
 * tab counts from that tab's next request. Both stores are equally private (per origin, readable
 * only by this app's scripts, cleared with the site's data), and IndexedDB would have meant a
 * schema upgrade of the conversations database for one string.
 *
 * The key is written here and read by `client.ts`; everything else sees only `keyPrefix()`.
 */

import { localEntry } from './local-entry';

const STORAGE_KEY = 'hearth.access-key';

/** Every Hearth key starts with this (companion/src/access/keys.ts). */
export const KEY_PREFIX = 'hth_';

/** The localStorage entry, for `storage` events from other tabs. */
export const ACCESS_KEY_STORAGE = STORAGE_KEY;

const entry = localEntry(STORAGE_KEY);

export const readAccessKey = (): string | null => entry.read();
/** Throws when the browser will not keep it (storage disabled or full). */
export const storeAccessKey = (key: string): void => entry.store(key);
export const forgetAccessKey = (): void => entry.forget();

/** All that is ever shown of a key: the first characters, as `hearth keys list` shows them. */
export function keyPrefix(key: string): string {
  return `${key.slice(0, KEY_PREFIX.length + 6)}…`;
}

/** Why the text cannot be a Hearth key (checked before it is sent anywhere), or null. */
export function keyFormatProblem(key: string): string | null {
  if (!key) return 'Paste the access key first.';
  if (!key.startsWith(KEY_PREFIX)) return `An access key starts with ${KEY_PREFIX}; copy the whole line \`hearth keys create\` printed.`;
  // base64url after the prefix; anything else could not even be sent as a header.
  if (!/^hth_[A-Za-z0-9_-]+$/.test(key)) return 'An access key has only letters, digits, "-" and "_" after hth_; check that nothing else was copied with it.';
  return null;
}
