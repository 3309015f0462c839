import type { Migration } from './migration.js';

/**
 * Migration 12: the app's admin sessions, one row each, so that signing out ends one for good
 * and "sign out everywhere" ends them all. A row holds only digests: `id` is a keyed digest of
 * the session cookie (keyed with the admin token, so a new token ends every session), `proof`
 * the digest of the second secret the app keeps in its own origin's storage and sends as a header.
 */
export const migration: Migration = {
  version: 12,
  name: 'admin sessions',
  sql: `
      CREATE TABLE admin_sessions (
        id TEXT PRIMARY KEY,
        proof TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_used_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) WITHOUT ROWID;
`,
};
