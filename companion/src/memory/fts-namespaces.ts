import type { Db } from '../store/database.js';
import { INDEXED_TABLES } from './indexed-tables.js';

/** The content tables that have a full-text index. */
export type IndexedTable = 'memory_turns' | 'memory_episodes' | 'memory_facts' | 'memory_identity';

const SUFFIX: Record<IndexedTable, string> = { memory_turns: 'turns', memory_episodes: 'episodes', memory_facts: 'facts', memory_identity: 'identity' };

/** Agent ids of ingests still being written (memory/staging.ts) start with this; they never get an index of their own. */
export const STAGED_PREFIX = '~';

/**
 * A full-text index per agent. Each agent's turns, episodes, facts and identity entries have
 * FTS5 tables of their own (`memory_fts_<n>_turns`, …), kept in step by triggers that fire only
 * for that agent's rows. BM25's statistics (how many records, how long, how many contain a term)
 * are then that agent's alone: no score, and no order of results, depends on what another
 * agent stored. The tables are made, and filled from the agent's records, on first use; an
 * agent whose index was removed has none until it is rebuilt.
 */
export class FtsNamespaces {
  private readonly known = new Map<string, number>();
  private readonly listeners = new Set<(agentId: string) => void>();

  constructor(private readonly db: Db) {}

  /** The FTS table of one agent's material, made on first use; undefined while the agent's index is removed. */
  table(agentId: string, table: IndexedTable): string | undefined {
    const n = this.ensure(agentId);
    return n === undefined ? undefined : tableName(n, table);
  }

  /** The agent's namespace number, making its tables (filled from its records) when it has none. */
  ensure(agentId: string): number | undefined {
    const cached = this.known.get(agentId);
    if (cached !== undefined) return cached;
    if (agentId.startsWith(STAGED_PREFIX) || this.removed(agentId)) return undefined;
    const row = this.db.prepare<[string], { n: number }>('SELECT n FROM memory_fts_namespaces WHERE agent_id = ?').get(agentId);
    const n = row?.n ?? this.create(agentId);
    this.known.set(agentId, n);
    return n;
  }

  /** The agent's table of this material if it exists now; never makes one. */
  existing(agentId: string, table: IndexedTable): string | undefined {
    const n = this.known.get(agentId) ?? this.db.prepare<[string], { n: number }>('SELECT n FROM memory_fts_namespaces WHERE agent_id = ?').get(agentId)?.n;
    return n === undefined ? undefined : tableName(n, table);
  }

  /** Makes the tables of every agent that has records (after the migration, or a crash mid-way). */
  ensureAll(): void {
    const agents = this.db
      .prepare<[], { agent_id: string }>(
        `SELECT agent_id FROM (${Object.keys(INDEXED_TABLES)
          .map((table) => `SELECT DISTINCT agent_id FROM ${table}`)
          .join(' UNION ')}) WHERE agent_id NOT LIKE '${STAGED_PREFIX}%'`,
      )
      .all();
    for (const { agent_id } of agents) this.ensure(agent_id);
  }

  /** Drops the agent's tables and triggers (index removal, purge); the records stay unless purged. */
  drop(agentId: string): void {
    const row = this.db.prepare<[string], { n: number }>('SELECT n FROM memory_fts_namespaces WHERE agent_id = ?').get(agentId);
    this.known.delete(agentId);
    for (const listener of this.listeners) listener(agentId);
    if (!row) return;
    this.db.transaction(() => {
      for (const table of Object.keys(INDEXED_TABLES) as IndexedTable[]) {
        const fts = tableName(row.n, table);
        this.db.exec(
          `DROP TRIGGER IF EXISTS ${fts}_insert; DROP TRIGGER IF EXISTS ${fts}_delete; DROP TRIGGER IF EXISTS ${fts}_update; DROP TABLE IF EXISTS ${fts};`,
        );
      }
      this.db.prepare('DELETE FROM memory_fts_namespaces WHERE agent_id = ?').run(agentId);
    })();
  }

  /** Told when an agent's tables go, so statements prepared on them can be forgotten. */
  onDrop(listener: (agentId: string) => void): void {
    this.listeners.add(listener);
  }

  private removed(agentId: string): boolean {
    return this.db.prepare('SELECT 1 FROM memory_index_removed WHERE agent_id = ?').get(agentId) !== undefined;
  }

  private create(agentId: string): number {
    return this.db.transaction(() => {
      const n = (this.db.prepare<[], { n: number }>('SELECT COALESCE(MAX(n), 0) + 1 AS n FROM memory_fts_namespaces').get()?.n ?? 1) as number;
      this.db.prepare('INSERT INTO memory_fts_namespaces (agent_id, n) VALUES (?, ?)').run(agentId, n);
      const agent = `'${agentId.replace(/'/g, "''")}'`;
      for (const [table, columns] of Object.entries(INDEXED_TABLES) as [IndexedTable, string[]][]) {
        const fts = tableName(n, table);
        const list = columns.join(', ');
        const values = (row: 'new' | 'old') => columns.map((column) => `${row}.${column}`).join(', ');
        this.db.exec(`
          CREATE VIRTUAL TABLE ${fts} USING fts5(${list}, content='${table}', content_rowid='id', tokenize='porter unicode61');
          CREATE TRIGGER ${fts}_insert AFTER INSERT ON ${table} WHEN new.agent_id = ${agent} BEGIN
            INSERT INTO ${fts}(rowid, ${list}) VALUES (new.id, ${values('new')});
          END;
          CREATE TRIGGER ${fts}_delete AFTER DELETE ON ${table} WHEN old.agent_id = ${agent} BEGIN
            INSERT INTO ${fts}(${fts}, rowid, ${list}) VALUES ('delete', old.id, ${values('old')});
          END;
          CREATE TRIGGER ${fts}_update AFTER UPDATE OF ${list} ON ${table} WHEN new.agent_id = ${agent} BEGIN
            INSERT INTO ${fts}(${fts}, rowid, ${list}) VALUES ('delete', old.id, ${values('old')});
            INSERT INTO ${fts}(rowid, ${list}) VALUES (new.id, ${values('new')});
          END;`);
        this.db.prepare(`INSERT INTO ${fts}(rowid, ${list}) SELECT id, ${list} FROM ${table} WHERE agent_id = ?`).run(agentId);
      }
      return n;
    })();
  }
}

export function tableName(n: number, table: IndexedTable): string {
  return `memory_fts_${n}_${SUFFIX[table]}`;
}
