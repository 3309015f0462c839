import type { Db } from '../store/database.js';
import type { HistoryItem } from '../inference/types.js';
import type { AgentRun, AgentRunError, AgentRunEvent, AgentRunStatus, AgentRunStep, AgentRunSummary, AgentToolCall } from '#shared/api/agents.js';

interface RunRow {
  id: string;
  agent_id: string;
  conversation_id: string;
  model: string;
  status: AgentRunStatus;
  input_json: string;
  output_text: string;
  usage_json: string;
  error_json: string | null;
  created_at: number;
  completed_at: number | null;
}

function toRun(row: RunRow, steps: AgentRunStep[]): AgentRun {
  return {
    id: row.id,
    object: 'agent.run',
    agent_id: row.agent_id,
    conversation_id: row.conversation_id,
    model: row.model,
    status: row.status,
    input: JSON.parse(row.input_json) as AgentRun['input'],
    output_text: row.output_text,
    steps,
    usage: JSON.parse(row.usage_json) as AgentRun['usage'],
    created_at: row.created_at,
    completed_at: row.completed_at,
    ...(row.error_json ? { error: JSON.parse(row.error_json) as AgentRunError } : {}),
  };
}

/** A step as its row holds it: its tool calls have rows of their own. */
function stepJson(step: AgentRunStep): string {
  return JSON.stringify({ ...step, tool_calls: undefined });
}

/**
 * Runs, their steps, tool calls and events, agents' conversation history, and the shell calls
 * under way, in SQLite: every write is committed when the call returns.
 */
export class RunStore {
  private readonly statements;

  constructor(private readonly db: Db) {
    this.statements = {
      insert: db.prepare(
        `INSERT INTO agent_runs (id, agent_id, conversation_id, model, status, input_json, output_text, usage_json, error_json, created_at, completed_at)
         VALUES (@id, @agent_id, @conversation_id, @model, @status, @input_json, @output_text, @usage_json, @error_json, @created_at, @completed_at)`,
      ),
      update: db.prepare(
        `UPDATE agent_runs SET status = @status, output_text = @output_text, usage_json = @usage_json,
         error_json = @error_json, completed_at = @completed_at WHERE id = @id`,
      ),
      get: db.prepare<[string], RunRow>('SELECT * FROM agent_runs WHERE id = ?'),
      list: db.prepare<[string, number, number], RunRow & { step_count: number }>(
        `SELECT *, (SELECT COUNT(*) FROM agent_run_steps WHERE run_id = agent_runs.id) AS step_count
         FROM agent_runs WHERE agent_id = ? AND created_at <= ? ORDER BY created_at DESC, rowid DESC LIMIT ?`,
      ),
      step: db.prepare('INSERT OR REPLACE INTO agent_run_steps (run_id, step, data_json) VALUES (?, ?, ?)'),
      steps: db.prepare<[string], { data_json: string }>('SELECT data_json FROM agent_run_steps WHERE run_id = ? ORDER BY step'),
      call: db.prepare('INSERT OR REPLACE INTO agent_run_tool_calls (run_id, step, position, data_json) VALUES (?, ?, ?, ?)'),
      calls: db.prepare<[string], { step: number; data_json: string }>(
        'SELECT step, data_json FROM agent_run_tool_calls WHERE run_id = ? ORDER BY step, position',
      ),
      exists: db.prepare<[string], { found: number }>('SELECT 1 AS found FROM agent_runs WHERE id = ?'),
      addProcess: db.prepare('INSERT OR REPLACE INTO agent_shell_processes (marker, run_id, started_at) VALUES (?, ?, ?)'),
      removeProcess: db.prepare('DELETE FROM agent_shell_processes WHERE marker = ?'),
      processes: db.prepare<[], { marker: string }>('SELECT marker FROM agent_shell_processes'),
      inFlight: db.prepare<[], RunRow>("SELECT * FROM agent_runs WHERE status IN ('running', 'awaiting_approval')"),
      event: db.prepare('INSERT INTO agent_run_events (run_id, sequence, type, data_json, created_at) VALUES (?, ?, ?, ?, ?)'),
      events: db.prepare<[string, number, number], { data_json: string }>(
        'SELECT data_json FROM agent_run_events WHERE run_id = ? AND sequence > ? ORDER BY sequence LIMIT ?',
      ),
      eventsOfType: db.prepare<[string, string], { data_json: string }>(
        'SELECT data_json FROM agent_run_events WHERE run_id = ? AND type = ? ORDER BY sequence',
      ),
      lastSequence: db.prepare<[string], { sequence: number | null }>('SELECT MAX(sequence) AS sequence FROM agent_run_events WHERE run_id = ?'),
      message: db.prepare('INSERT INTO agent_messages (agent_id, conversation_id, run_id, message_json, created_at) VALUES (?, ?, ?, ?, ?)'),
      history: db.prepare<[string, string], { message_json: string }>(
        'SELECT message_json FROM agent_messages WHERE agent_id = ? AND conversation_id = ? ORDER BY id',
      ),
    };
  }

  insert(run: AgentRun): void {
    this.statements.insert.run(this.row(run));
  }

  /**
   * The run's own fields, and the steps given (the one under way, or every step at the end), in
   * one transaction. A step's tool calls are not written here (see `putCall`), unless `withCalls`.
   */
  update(run: AgentRun, steps: AgentRunStep[] = [], withCalls = false): void {
    this.db.transaction(() => {
      this.statements.update.run(this.row(run));
      for (const step of steps) {
        this.statements.step.run(run.id, step.index, stepJson(step));
        if (withCalls) step.tool_calls.forEach((call, position) => this.statements.call.run(run.id, step.index, position, JSON.stringify(call)));
      }
    })();
  }

  /** One tool call as it stands (recorded when it is created, and again as it is decided and ends). */
  putCall(runId: string, step: number, position: number, call: AgentToolCall): void {
    this.statements.call.run(runId, step, position, JSON.stringify(call));
  }

  /** Runs `work` in one transaction (many small writes at once). */
  batch<T>(work: () => T): T {
    return this.db.transaction(work)();
  }

  exists(id: string): boolean {
    return this.statements.exists.get(id) !== undefined;
  }

  get(id: string): AgentRun | undefined {
    const row = this.statements.get.get(id);
    return row ? toRun(row, this.steps(id)) : undefined;
  }

  /** An agent's runs, newest first, created at or before `before` (unix seconds). */
  list(agentId: string, limit: number, before = Number.MAX_SAFE_INTEGER): { runs: AgentRunSummary[]; hasMore: boolean } {
    const rows = this.statements.list.all(agentId, before, limit + 1);
    return {
      runs: rows.slice(0, limit).map(({ step_count, ...row }) => ({ ...toRun(row, []), steps: step_count })),
      hasMore: rows.length > limit,
    };
  }

  inFlight(): AgentRun[] {
    return this.statements.inFlight.all().map((row) => toRun(row, this.steps(row.id)));
  }

  private steps(runId: string): AgentRunStep[] {
    const steps = this.statements.steps.all(runId).map((row) => ({ ...(JSON.parse(row.data_json) as AgentRunStep), tool_calls: [] as AgentToolCall[] }));
    const byIndex = new Map(steps.map((step) => [step.index, step]));
    for (const row of this.statements.calls.all(runId)) byIndex.get(row.step)?.tool_calls.push(JSON.parse(row.data_json) as AgentToolCall);
    return steps;
  }

  /** A shell call under way, by its environment marker. */
  addProcess(marker: string, runId: string): void {
    this.statements.addProcess.run(marker, runId, Date.now());
  }

  removeProcess(marker: string): void {
    this.statements.removeProcess.run(marker);
  }

  /** The markers of shell calls recorded as under way (after a crash: what it left). */
  processes(): string[] {
    return this.statements.processes.all().map((row) => row.marker);
  }

  appendEvent(event: AgentRunEvent): void {
    this.statements.event.run(event.run_id, event.sequence, event.type, JSON.stringify(event), Date.now());
  }

  events(runId: string, after: number, limit = 10_000): AgentRunEvent[] {
    return this.statements.events.all(runId, after, limit).map((row) => JSON.parse(row.data_json) as AgentRunEvent);
  }

  /** Every event of one type of a run (a few, such as its artifacts), oldest first. */
  eventsOfType(runId: string, type: AgentRunEvent['type']): AgentRunEvent[] {
    return this.statements.eventsOfType.all(runId, type).map((row) => JSON.parse(row.data_json) as AgentRunEvent);
  }

  lastSequence(runId: string): number {
    return this.statements.lastSequence.get(runId)?.sequence ?? 0;
  }

  /** Appends messages to a conversation's history, all or none. */
  appendMessages(agentId: string, conversationId: string, runId: string | null, messages: HistoryItem[]): void {
    const now = Date.now();
    this.db.transaction(() => {
      for (const message of messages) this.statements.message.run(agentId, conversationId, runId, storedMessage(message), now);
    })();
  }

  history(agentId: string, conversationId: string): HistoryItem[] {
    return this.statements.history.all(agentId, conversationId).map((row) => restoredMessage(row.message_json));
  }

  private row(run: AgentRun) {
    return {
      id: run.id,
      agent_id: run.agent_id,
      conversation_id: run.conversation_id,
      model: run.model,
      status: run.status,
      input_json: JSON.stringify(run.input),
      output_text: run.output_text,
      usage_json: JSON.stringify(run.usage),
      error_json: run.error ? JSON.stringify(run.error) : null,
      created_at: run.created_at,
      completed_at: run.completed_at,
    };
  }
}

/** A history item as stored: its images' bytes as base64 (JSON has no bytes). */
function storedMessage(message: HistoryItem): string {
  if ((message.role !== 'user' && message.role !== 'tool') || !message.media) return JSON.stringify(message);
  return JSON.stringify({ ...message, media: message.media.map((part) => ({ ...part, data: part.data.toString('base64') })) });
}

/** A stored history item, its images' bytes read back. */
function restoredMessage(json: string): HistoryItem {
  const message = JSON.parse(json) as HistoryItem;
  if ((message.role !== 'user' && message.role !== 'tool') || !message.media) return message;
  return { ...message, media: message.media.map((part) => ({ ...part, data: Buffer.from(part.data as unknown as string, 'base64') })) };
}
