import type { Migration } from './migration.js';

/** Migration 6: model downloads started from the app, kept across page reloads and restarts. */
export const migration: Migration = {
  version: 6,
  name: 'model downloads',
  sql: `
      CREATE TABLE model_downloads (
        id TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        -- queued | downloading | paused | completed | failed | cancelled
        status TEXT NOT NULL,
        bytes_done INTEGER NOT NULL DEFAULT 0,
        bytes_total INTEGER,
        -- first part's name in the models folder; files_json lists every part
        file TEXT,
        files_json TEXT NOT NULL DEFAULT '[]',
        model_id TEXT,
        error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
`,
};
