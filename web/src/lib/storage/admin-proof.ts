/**
 * The proof of this browser's admin session: the second secret the companion gave at sign-in,
 * kept in the localStorage of the companion's own origin (http://127.0.0.1:<port>), which no
 * page of another port or site can read. `client.ts` sends it as a header on every admin
 * request; the session cookie without it opens nothing, because every page served from
 * 127.0.0.1, whatever its port, can get the browser to send it the cookie.
 */

import { localEntry } from './local-entry';

const STORAGE_KEY = 'hearth.admin-proof';

/** The localStorage entry, for `storage` events from other tabs. */
export const ADMIN_PROOF_STORAGE = STORAGE_KEY;

const entry = localEntry(STORAGE_KEY);

export const readAdminProof = (): string | null => entry.read();
/** Throws when the browser will not keep it (storage disabled or full): the sign-in then says so. */
export const storeAdminProof = (proof: string): void => entry.store(proof);
export const forgetAdminProof = (): void => entry.forget();
