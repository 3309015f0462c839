import type { Db } from '../store/database.js';
import { STAGED_PREFIX } from './fts-namespaces.js';
import type { MemoryTranscriptTurn } from '#shared/api/memory.js';

export interface TurnRecord {
  user: string;
  assistant: string;
}

export interface TurnBatch {
  agentId: string;
  conversationId: string;
  kind: 'direct' | 'delegated';
  projectId: string | null;
  sessionDate: string | null;
  sessionTime: number | null;
  turns: TurnRecord[];
  /** Record a pending signal per turn (false: transcript only, skip_extraction). */
  signal: boolean;
}

export interface TurnRow {
  id: number;
  agent_id: string;
  conversation_id: string;
  kind: 'direct' | 'delegated';
  project_id: string | null;
  user_text: string;
  assistant_text: string;
  session_date: string | null;
  session_time: number | null;
  created_at: number;
}

/** Writes and reads the transcript and its pending signals. */
export class TranscriptStore {
  private readonly insertTurn;
  private readonly insertSignal;
  private readonly writeBatch;

  constructor(private readonly db: Db) {
    this.insertTurn = db.prepare(
      `INSERT INTO memory_turns (agent_id, conversation_id, kind, project_id, user_text, assistant_text, session_date, session_time, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertSignal = db.prepare('INSERT INTO memory_signals (turn_id, agent_id, conversation_id, created_at) VALUES (?, ?, ?, ?)');
    this.writeBatch = db.transaction((batch: TurnBatch, now: number) => {
      for (const turn of batch.turns) {
        const { lastInsertRowid } = this.insertTurn.run(
          batch.agentId,
          batch.conversationId,
          batch.kind,
          batch.projectId,
          turn.user,
          turn.assistant,
          batch.sessionDate,
          batch.sessionTime,
          now,
        );
        if (batch.signal) this.insertSignal.run(lastInsertRowid, batch.agentId, batch.conversationId, now);
      }
    });
  }

  /** One transaction: once this returns, every turn (and its signal) is committed. */
  append(batch: TurnBatch, now = Date.now()): void {
    this.writeBatch.immediate(batch, now);
  }

  /**
   * One chunk of a large ingest, committed under the batch's staged agent id (see
   * memory/staging.ts), where no query of any agent sees it; its turns are indexed into the real
   * agent's full-text table `fts` (when it has one) so that publishing costs no indexing.
   */
  stage(batch: TurnBatch, fts: string | undefined, now = Date.now()): void {
    this.db
      .transaction(() => {
        const first = this.nextId();
        this.writeBatch(batch, now);
        if (fts) {
          this.db
            .prepare(
              `INSERT INTO ${fts}(rowid, user_text, assistant_text) SELECT id, user_text, assistant_text FROM memory_turns WHERE agent_id = ? AND id >= ?`,
            )
            .run(batch.agentId, first);
        }
      })
      .immediate();
  }

  /** Makes a staged ingest the agent's in one small transaction: every turn at once, or none. */
  publish(staged: string, agentId: string, reindexInto: string | undefined): void {
    this.db
      .transaction(() => {
        if (reindexInto) {
          this.db
            .prepare(`INSERT INTO ${reindexInto}(rowid, user_text, assistant_text) SELECT id, user_text, assistant_text FROM memory_turns WHERE agent_id = ?`)
            .run(staged);
        }
        this.db.prepare('UPDATE memory_turns SET agent_id = ? WHERE agent_id = ?').run(agentId, staged);
        this.db.prepare('UPDATE memory_signals SET agent_id = ? WHERE agent_id = ?').run(agentId, staged);
      })
      .immediate();
  }

  /** Removes a staged ingest that was not published: its turns, signals and entries in `fts`. */
  discardStaged(staged: string, fts: string | undefined): void {
    this.db
      .transaction(() => {
        if (fts) {
          this.db
            .prepare(
              `INSERT INTO ${fts}(${fts}, rowid, user_text, assistant_text) SELECT 'delete', id, user_text, assistant_text FROM memory_turns WHERE agent_id = ?`,
            )
            .run(staged);
        }
        this.db.prepare('DELETE FROM memory_signals WHERE agent_id = ?').run(staged);
        this.db.prepare('DELETE FROM memory_turns WHERE agent_id = ?').run(staged);
      })
      .immediate();
  }

  /** Staged ingests left by a process that stopped before publishing them. */
  stagedIds(): string[] {
    return this.db
      .prepare<[], { agent_id: string }>(`SELECT DISTINCT agent_id FROM memory_turns WHERE agent_id LIKE '${STAGED_PREFIX}%'`)
      .all()
      .map((row) => row.agent_id);
  }

  private nextId(): number {
    return (this.db.prepare<[], { id: number | null }>('SELECT MAX(id) AS id FROM memory_turns').get()?.id ?? 0) + 1;
  }

  /** Pending signals of a conversation, oldest first, with their turns. */
  pending(agentId: string, conversationId: string, limit = 1000): (TurnRow & { signal_id: number })[] {
    return this.db
      .prepare<[string, string, number], TurnRow & { signal_id: number }>(
        `SELECT s.id AS signal_id, t.* FROM memory_signals s JOIN memory_turns t ON t.id = s.turn_id
         WHERE s.agent_id = ? AND s.conversation_id = ? ORDER BY s.id LIMIT ?`,
      )
      .all(agentId, conversationId, limit);
  }

  /** Conversations with pending signals: of one agent, or of all (for restarts and consolidation). */
  pendingConversations(agentId?: string): { agent_id: string; conversation_id: string; signals: number }[] {
    // Ingests still being written (staged) are nobody's yet.
    const where = agentId === undefined ? `WHERE agent_id NOT LIKE '${STAGED_PREFIX}%'` : 'WHERE agent_id = ?';
    return this.db
      .prepare<unknown[], { agent_id: string; conversation_id: string; signals: number }>(
        `SELECT agent_id, conversation_id, COUNT(*) AS signals FROM memory_signals ${where} GROUP BY agent_id, conversation_id ORDER BY MIN(id)`,
      )
      .all(...(agentId === undefined ? [] : [agentId]));
  }

  pendingCount(agentId: string, conversationId?: string): number {
    const row =
      conversationId === undefined
        ? this.db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM memory_signals WHERE agent_id = ?').get(agentId)
        : this.db
            .prepare<[string, string], { n: number }>('SELECT COUNT(*) AS n FROM memory_signals WHERE agent_id = ? AND conversation_id = ?')
            .get(agentId, conversationId);
    return row?.n ?? 0;
  }

  recordFailure(signalIds: number[], message: string): void {
    const update = this.db.prepare('UPDATE memory_signals SET attempts = attempts + 1, last_error = ? WHERE id = ?');
    this.db.transaction(() => signalIds.forEach((id) => update.run(message.slice(0, 500), id)))();
  }

  /** Deletes the signals among `ids` that failed `limit` times; returns how many. */
  dropExhausted(ids: number[], limit: number): number {
    return this.db.prepare('DELETE FROM memory_signals WHERE attempts >= ? AND id IN (SELECT value FROM json_each(?))').run(limit, JSON.stringify(ids)).changes;
  }

  /** Newest first; `before` is a turn id for paging. */
  list(agentId: string, options: { conversationId?: string; before?: number; limit: number }): MemoryTranscriptTurn[] {
    const filters = ['t.agent_id = ?'];
    const values: unknown[] = [agentId];
    if (options.conversationId !== undefined) {
      filters.push('t.conversation_id = ?');
      values.push(options.conversationId);
    }
    if (options.before !== undefined) {
      filters.push('t.id < ?');
      values.push(options.before);
    }
    const rows = this.db
      .prepare<unknown[], TurnRow & { pending: number }>(
        `SELECT t.*, EXISTS (SELECT 1 FROM memory_signals s WHERE s.turn_id = t.id) AS pending
         FROM memory_turns t WHERE ${filters.join(' AND ')} ORDER BY t.id DESC LIMIT ?`,
      )
      .all(...values, options.limit);
    return rows.map((row) => ({
      id: `turn_${row.id}`,
      conversation_id: row.conversation_id,
      kind: row.kind,
      project_id: row.project_id,
      user: row.user_text,
      assistant: row.assistant_text,
      session_date: row.session_date,
      created_at: new Date(row.created_at).toISOString(),
      pending: row.pending === 1,
    }));
  }
}
