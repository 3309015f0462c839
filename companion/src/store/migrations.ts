import { MEMORY_SCHEMA_SQL } from '../memory/schema-sql.js';

/** Numbered schema migrations; a migration, once released, never changes: add a new one. */
export const MIGRATIONS: { version: number; name: string; sql: string }[] = [
  {
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
  },
  {
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
  },
  {
    version: 3,
    name: 'memory: transcript, signals, episodes, facts, identity, entities',
    sql: MEMORY_SCHEMA_SQL,
  },
  {
    version: 4,
    name: 'memory: which records have a vector for hybrid search',
    sql: `
      -- The vectors live in a sqlite-vec table made at run time, sized for the configured
      -- embedding model (memory/vectors.ts). id = record id * 4 + material code.
      CREATE TABLE memory_vector_rows (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        material TEXT NOT NULL,
        record_id INTEGER NOT NULL
      );
      CREATE INDEX memory_vector_rows_agent ON memory_vector_rows(agent_id);
    `,
  },
];
