import type { Migration } from './migration.js';

/** Migration 4, released: never change it; add a new migration instead. */
export const migration: Migration = {
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
};
