import { HearthError } from '../errors.js';
import type { Db } from '../store/database.js';
import type {
  MemoryAgentStatus,
  MemoryEntity,
  MemoryEpisode,
  MemoryFact,
  MemoryIdentityEntry,
  MemoryIndexResponse,
  MemoryPurgeResponse,
} from '#shared/api/memory.js';
import { STAGED_PREFIX, type FtsNamespaces } from './fts-namespaces.js';
import { INDEXED_TABLES } from './indexed-tables.js';

const MATERIAL_OF: Record<string, keyof MemoryIndexResponse['rows']> = {
  memory_turns: 'transcript',
  memory_episodes: 'episodes',
  memory_facts: 'facts',
  memory_identity: 'identity',
};

const iso = (time: number) => new Date(time).toISOString();

/** Index operations (docs/memory.md rule 6) and the browsing of one agent's records. Every query names the agent. */
export class MemoryManager {
  constructor(
    private readonly db: Db,
    private readonly namespaces: FtsNamespaces,
  ) {}

  indexRemoved(agentId: string): boolean {
    return this.db.prepare('SELECT 1 FROM memory_index_removed WHERE agent_id = ?').get(agentId) !== undefined;
  }

  /** Restores the agent's index from its own records only; other agents' indexes are untouched. */
  rebuildIndex(agentId: string): MemoryIndexResponse {
    return this.db.transaction(() => {
      this.namespaces.drop(agentId);
      this.db.prepare('DELETE FROM memory_index_removed WHERE agent_id = ?').run(agentId);
      this.namespaces.ensure(agentId);
      return { agent_id: agentId, index: 'ready' as const, rows: this.counts(agentId) };
    })();
  }

  /** Drops the agent's index; the records stay and nothing is indexed until a rebuild. */
  removeIndex(agentId: string): MemoryIndexResponse {
    return this.db.transaction(() => {
      const rows = this.indexRemoved(agentId) ? { transcript: 0, episodes: 0, facts: 0, identity: 0 } : this.counts(agentId);
      this.db.prepare('INSERT OR REPLACE INTO memory_index_removed (agent_id, removed_at) VALUES (?, ?)').run(agentId, Date.now());
      this.namespaces.drop(agentId);
      return { agent_id: agentId, index: 'removed' as const, rows };
    })();
  }

  /** Deletes everything stored for the agent: records, signals, its index, the removed-index mark. */
  purge(agentId: string): MemoryPurgeResponse {
    return this.db.transaction(() => {
      this.namespaces.drop(agentId);
      const remove = (table: string) => this.db.prepare(`DELETE FROM ${table} WHERE agent_id = ?`).run(agentId).changes;
      const signals = remove('memory_signals');
      const deleted = {
        turns: remove('memory_turns'),
        signals,
        episodes: remove('memory_episodes'),
        facts: remove('memory_facts'),
        identity: remove('memory_identity'),
        entities: remove('memory_entities'),
      };
      this.db.prepare('DELETE FROM memory_index_removed WHERE agent_id = ?').run(agentId);
      return { agent_id: agentId, deleted };
    })();
  }

  /** The agent's records per indexed material (what its index holds). */
  private counts(agentId: string): MemoryIndexResponse['rows'] {
    const rows = { transcript: 0, episodes: 0, facts: 0, identity: 0 };
    for (const table of Object.keys(INDEXED_TABLES)) {
      rows[MATERIAL_OF[table]!] = this.db.prepare<[string], { n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE agent_id = ?`).get(agentId)?.n ?? 0;
    }
    return rows;
  }

  status(agentId: string): MemoryAgentStatus {
    const count = (sql: string) => this.db.prepare<[string], { n: number }>(sql).get(agentId)?.n ?? 0;
    return {
      agent_id: agentId,
      turns: count('SELECT COUNT(*) AS n FROM memory_turns WHERE agent_id = ?'),
      pending_signals: count('SELECT COUNT(*) AS n FROM memory_signals WHERE agent_id = ?'),
      episodes: count('SELECT COUNT(*) AS n FROM memory_episodes WHERE agent_id = ?'),
      facts: {
        pinned: count(`SELECT COUNT(*) AS n FROM memory_facts WHERE agent_id = ? AND status = 'pinned'`),
        candidate: count(`SELECT COUNT(*) AS n FROM memory_facts WHERE agent_id = ? AND status = 'candidate'`),
      },
      identity: count('SELECT COUNT(*) AS n FROM memory_identity WHERE agent_id = ?'),
      index: this.indexRemoved(agentId) ? 'removed' : 'ready',
    };
  }

  /** Agents that have any memory, with their status; `only` narrows to one agent (a scoped caller). */
  agents(only?: string): MemoryAgentStatus[] {
    const ids = this.db
      .prepare<[], { agent_id: string }>(
        `SELECT agent_id FROM (SELECT agent_id FROM memory_turns UNION SELECT agent_id FROM memory_facts UNION SELECT agent_id FROM memory_identity UNION SELECT agent_id FROM memory_episodes)
         WHERE agent_id NOT LIKE '${STAGED_PREFIX}%' ORDER BY 1`,
      )
      .all()
      .map((row) => row.agent_id);
    return ids.filter((id) => only === undefined || id === only).map((id) => this.status(id));
  }

  episodes(agentId: string, before: number | undefined, limit: number): MemoryEpisode[] {
    type Row = {
      id: number;
      conversation_id: string;
      project_id: string | null;
      summary: string;
      topics: string;
      decisions: string;
      session_date: string | null;
      salience: number;
      merged_count: number;
      created_at: number;
      updated_at: number;
    };
    return this.db
      .prepare<[string, number, number], Row>('SELECT * FROM memory_episodes WHERE agent_id = ? AND id < ? ORDER BY id DESC LIMIT ?')
      .all(agentId, before ?? Number.MAX_SAFE_INTEGER, limit)
      .map((row) => ({
        id: `episode_${row.id}`,
        conversation_id: row.conversation_id,
        project_id: row.project_id,
        summary: row.summary,
        topics: JSON.parse(row.topics) as string[],
        decisions: JSON.parse(row.decisions) as string[],
        session_date: row.session_date,
        salience: round(row.salience),
        merged_count: row.merged_count,
        created_at: iso(row.created_at),
        updated_at: iso(row.updated_at),
      }));
  }

  facts(agentId: string, status: 'candidate' | 'pinned' | undefined, before: number | undefined, limit: number): MemoryFact[] {
    const rows = this.db
      .prepare<[string, string | null, string | null, number, number], FactRow>(
        'SELECT * FROM memory_facts WHERE agent_id = ? AND (? IS NULL OR status = ?) AND id < ? ORDER BY id DESC LIMIT ?',
      )
      .all(agentId, status ?? null, status ?? null, before ?? Number.MAX_SAFE_INTEGER, limit);
    return rows.map(factOf);
  }

  fact(agentId: string, id: number): MemoryFact {
    const row = this.db.prepare<[string, number], FactRow>('SELECT * FROM memory_facts WHERE agent_id = ? AND id = ?').get(agentId, id);
    if (!row) throw new HearthError('memory_record_not_found', `Agent "${agentId}" has no fact fact_${id}.`, { param: 'id' });
    return factOf(row);
  }

  identity(agentId: string): MemoryIdentityEntry[] {
    return this.db
      .prepare<[string], { key: string; value: string; source: 'extraction' | 'user'; updated_at: number }>(
        'SELECT key, value, source, updated_at FROM memory_identity WHERE agent_id = ? ORDER BY key',
      )
      .all(agentId)
      .map((row) => ({ ...row, updated_at: iso(row.updated_at) }));
  }

  entities(agentId: string, limit: number): MemoryEntity[] {
    return this.db
      .prepare<[string, number], { name: string; kind: string; mentions: number; first_seen: number; last_seen: number }>(
        'SELECT name, kind, mentions, first_seen, last_seen FROM memory_entities WHERE agent_id = ? ORDER BY mentions DESC, name LIMIT ?',
      )
      .all(agentId, limit)
      .map((row) => ({ ...row, first_seen: iso(row.first_seen), last_seen: iso(row.last_seen) }));
  }
}

/** A fact as stored: the wire fact with its row id and times in milliseconds. */
type FactRow = Omit<MemoryFact, 'id' | 'created_at' | 'updated_at'> & { id: number; created_at: number; updated_at: number };

function factOf(row: FactRow): MemoryFact {
  return {
    id: `fact_${row.id}`,
    text: row.text,
    status: row.status,
    source: row.source,
    support_count: row.support_count,
    salience: round(row.salience),
    conversation_id: row.conversation_id,
    session_date: row.session_date,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
