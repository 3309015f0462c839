import type { Migration } from './migration.js';

/** Migration 2, released: never change it; add a new migration instead. */
export const migration: Migration = {
  version: 2,
  name: 'access keys and configuration audit',
  sql: `
      CREATE TABLE access_keys (
        id TEXT PRIMARY KEY,
        label TEXT NOT NULL,
        -- SHA-256 of the key; the key itself is shown once and never stored
        hash TEXT NOT NULL UNIQUE,
        prefix TEXT NOT NULL,
        agent TEXT,
        scopes_json TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        last_used_at INTEGER,
        revoked_at INTEGER
      );
      CREATE TABLE config_audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at INTEGER NOT NULL,
        peer TEXT NOT NULL,
        prune INTEGER NOT NULL,
        confirmed INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        changes_json TEXT NOT NULL,
        risks_json TEXT NOT NULL
      );
`,
};
