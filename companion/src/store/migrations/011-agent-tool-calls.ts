import type { Migration } from './migration.js';

/**
 * Migration 11: an agent run's tool calls get rows of their own (a step's row no longer holds
 * them, so recording one call no longer rewrites every other call of its step), and the shell
 * calls under way are recorded by their environment marker, so a start after a crash can end
 * what they left running.
 */
export const migration: Migration = {
  version: 11,
  name: 'agent tool calls in rows, running shell calls',
  sql: `
      CREATE TABLE agent_run_tool_calls (
        run_id TEXT NOT NULL REFERENCES agent_runs (id) ON DELETE CASCADE,
        step INTEGER NOT NULL,
        position INTEGER NOT NULL,
        data_json TEXT NOT NULL,
        PRIMARY KEY (run_id, step, position)
      ) WITHOUT ROWID;
      INSERT INTO agent_run_tool_calls (run_id, step, position, data_json)
        SELECT steps.run_id, steps.step, CAST(calls.key AS INTEGER), calls.value
        FROM agent_run_steps AS steps, json_each(steps.data_json, '$.tool_calls') AS calls;
      UPDATE agent_run_steps SET data_json = json_remove(data_json, '$.tool_calls');
      CREATE TABLE agent_shell_processes (
        marker TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        started_at INTEGER NOT NULL
      ) WITHOUT ROWID;
`,
};
