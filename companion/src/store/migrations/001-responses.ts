import type { Migration } from './migration.js';

/** Migration 1, released: never change it; add a new migration instead. */
export const migration: Migration = {
  version: 1,
  name: 'responses and engine measurements',
  sql: `
      CREATE TABLE responses (
        id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        model TEXT NOT NULL,
        previous_response_id TEXT REFERENCES responses(id) ON DELETE SET NULL,
        -- the conversation items this response added: its input, then its output
        input_json TEXT NOT NULL,
        body_json TEXT NOT NULL
      );
      CREATE INDEX responses_created ON responses(created_at);
      CREATE TABLE thread_measurements (
        model_key TEXT PRIMARY KEY,
        threads INTEGER NOT NULL,
        measured_at INTEGER NOT NULL
      );
`,
};
