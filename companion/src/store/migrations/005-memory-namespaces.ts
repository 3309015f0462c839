import type { Migration } from './migration.js';

/** Migration 5, released: never change it; add a new migration instead. */
export const migration: Migration = {
  version: 5,
  name: 'memory: a full-text index per agent instead of one shared by all',
  sql: `
    -- One shared FTS5 index gave every agent the BM25 statistics of all agents, so scores leaked
    -- what others stored. Each agent now gets FTS5 tables of its own (memory/fts-namespaces.ts
    -- makes them, with their triggers, and fills them from the records on first use).
    DROP TRIGGER IF EXISTS memory_turns_fts_insert;
    DROP TRIGGER IF EXISTS memory_turns_fts_delete;
    DROP TRIGGER IF EXISTS memory_turns_fts_update;
    DROP TRIGGER IF EXISTS memory_episodes_fts_insert;
    DROP TRIGGER IF EXISTS memory_episodes_fts_delete;
    DROP TRIGGER IF EXISTS memory_episodes_fts_update;
    DROP TRIGGER IF EXISTS memory_facts_fts_insert;
    DROP TRIGGER IF EXISTS memory_facts_fts_delete;
    DROP TRIGGER IF EXISTS memory_facts_fts_update;
    DROP TRIGGER IF EXISTS memory_identity_fts_insert;
    DROP TRIGGER IF EXISTS memory_identity_fts_delete;
    DROP TRIGGER IF EXISTS memory_identity_fts_update;
    DROP TABLE IF EXISTS memory_turns_fts;
    DROP TABLE IF EXISTS memory_episodes_fts;
    DROP TABLE IF EXISTS memory_facts_fts;
    DROP TABLE IF EXISTS memory_identity_fts;
    CREATE TABLE memory_fts_namespaces (
      agent_id TEXT PRIMARY KEY,
      -- the number in the agent's table names: memory_fts_<n>_turns, _episodes, _facts, _identity
      n INTEGER NOT NULL UNIQUE
    );
`,
};
