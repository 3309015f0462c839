import type { Migration } from './migration.js';

/** Migration 8: agent runs, their steps and events, approvals, and agents' conversation history. */
export const migration: Migration = {
  version: 8,
  name: 'agent runs, events, approvals and conversations',
  sql: `
      CREATE TABLE agent_runs (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        model TEXT NOT NULL,
        -- running | awaiting_approval | completed | failed | cancelled
        status TEXT NOT NULL,
        input_json TEXT NOT NULL,
        output_text TEXT NOT NULL DEFAULT '',
        usage_json TEXT NOT NULL,
        error_json TEXT,
        created_at INTEGER NOT NULL,
        completed_at INTEGER
      );
      CREATE INDEX agent_runs_by_agent ON agent_runs (agent_id, created_at DESC);
      CREATE INDEX agent_runs_in_flight ON agent_runs (status) WHERE status IN ('running', 'awaiting_approval');
      -- One row per model call; only the step under way is rewritten as a run goes on.
      CREATE TABLE agent_run_steps (
        run_id TEXT NOT NULL REFERENCES agent_runs (id) ON DELETE CASCADE,
        step INTEGER NOT NULL,
        data_json TEXT NOT NULL,
        PRIMARY KEY (run_id, step)
      ) WITHOUT ROWID;
      CREATE TABLE agent_run_events (
        run_id TEXT NOT NULL REFERENCES agent_runs (id) ON DELETE CASCADE,
        sequence INTEGER NOT NULL,
        type TEXT NOT NULL,
        data_json TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, sequence)
      ) WITHOUT ROWID;
      CREATE TABLE agent_approvals (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES agent_runs (id) ON DELETE CASCADE,
        agent_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        arguments TEXT NOT NULL,
        class TEXT NOT NULL,
        -- pending | approved | denied | timed_out | cancelled
        status TEXT NOT NULL,
        reason TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        decided_at INTEGER
      );
      CREATE INDEX agent_approvals_pending ON agent_approvals (created_at) WHERE status = 'pending';
      -- The history a conversation continues from: runs' exchanges and attributed API turns.
      CREATE TABLE agent_messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        agent_id TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        run_id TEXT,
        message_json TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX agent_messages_by_conversation ON agent_messages (agent_id, conversation_id, id);
`,
};
