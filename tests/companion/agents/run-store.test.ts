import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { AgentRun, AgentRunStep, AgentToolCall } from '#shared/api/agents.js';
import { RunStore } from '../../../companion/src/agents/store.js';
import { openDatabase, type Db } from '../../../companion/src/store/database.js';
import { MIGRATIONS } from '../../../companion/src/store/migrations.js';
import { agentRun } from '../../helpers/agent-records.js';
import { tempFolder } from '../../helpers/temp.js';

/** Tool calls in rows of their own: written one at a time, read back into their steps, and moved there from older databases. */
const opened: Db[] = [];
afterAll(() => {
  for (const db of opened) if (db.open) db.close();
});

const call = (id: string, output: string | null = null): AgentToolCall => ({
  call_id: id,
  name: 'current_time',
  arguments: '{}',
  class: 'read',
  policy: 'auto',
  decision: 'auto',
  approval_id: null,
  output,
  is_error: false,
});

const run = (id: string): AgentRun => agentRun(id, { agent_id: 'keeper', model: 'script/scripted' });

const step = (index: number, calls: AgentToolCall[]): AgentRunStep => ({
  index,
  text: `step ${index}`,
  tool_calls: calls,
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  started_at: 1,
  completed_at: 2,
});

describe('the run store', () => {
  it('writes a call alone, and a step update leaves its calls alone', () => {
    const db = openDatabase(join(tempFolder('run-store'), 'hearth.db'));
    opened.push(db);
    const store = new RunStore(db);
    const record = run('run_rows');
    store.insert(record);
    store.update(record, [step(0, [])]);
    store.putCall(record.id, 0, 0, call('call_a'));
    store.putCall(record.id, 0, 1, call('call_b'));
    store.putCall(record.id, 0, 0, call('call_a', 'done'));
    // The step as the loop has it (its calls in memory) is written without them.
    store.update(record, [step(0, [call('call_a', 'done'), call('call_b')])]);
    expect(store.get(record.id)!.steps[0]!.tool_calls).toEqual([call('call_a', 'done'), call('call_b')]);
    const row = db.prepare<[], { data_json: string }>('SELECT data_json FROM agent_run_steps').get()!;
    expect(JSON.parse(row.data_json)).not.toHaveProperty('tool_calls');
  });

  it('an older database keeps its runs’ calls: the migration moves them out of the steps', () => {
    const file = join(tempFolder('run-store-old'), 'hearth.db');
    const old = new Database(file);
    for (const migration of MIGRATIONS.filter((candidate) => candidate.version <= 9)) old.exec(migration.sql);
    old.pragma('user_version = 9');
    const record = run('run_old');
    old
      .prepare(
        `INSERT INTO agent_runs (id, agent_id, conversation_id, model, status, input_json, output_text, usage_json, error_json, created_at, completed_at)
         VALUES (?, 'keeper', 'conv_1', 'm', 'completed', '[]', '', '{}', NULL, 1, 2)`,
      )
      .run(record.id);
    const steps = [step(0, [call('call_1', 'one'), call('call_2', 'two')]), step(1, [])];
    for (const each of steps)
      old.prepare('INSERT INTO agent_run_steps (run_id, step, data_json) VALUES (?, ?, ?)').run(record.id, each.index, JSON.stringify(each));
    old.close();

    const db = openDatabase(file);
    opened.push(db);
    expect(new RunStore(db).get(record.id)!.steps).toEqual(steps);
  });
});
