/**
 * The proof of this browser's admin session: the second secret the companion gave at sign-in,
 * kept in the localStorage of the companion's own origin (http://127.0.0.1:<port>), which no
 * page of another port or site can read. `client.ts` sends it as a header on every admin
 * request; the session cookie without it opens nothing, because every page served from
 * 127.0.0.1, whatever its port, can get the browser to send it the cookie.
 */

const STORAGE_KEY = 'hearth.admin-proof';

/** The localStorage entry, for `storage` events from other tabs. */
export const ADMIN_PROOF_STORAGE = STORAGE_KEY;

export function readAdminProof(): string | null {
  try {
    return globalThis.localStorage?.getItem(STORAGE_KEY) || null;
  } catch {
    return null;
  }
}

/** Throws when the browser will not keep it (storage disabled or full): the sign-in then says so. */
export function storeAdminProof(proof: string): void {
  globalThis.localStorage.setItem(STORAGE_KEY, proof);
}

export function forgetAdminProof(): void {
  try {
    globalThis.localStorage?.removeItem(STORAGE_KEY);
  } catch {
    // Storage is disabled: nothing was kept.
  }
}
