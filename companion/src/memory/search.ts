import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';
import { tableName, type FtsNamespaces, type IndexedTable } from './fts-namespaces.js';
import type { MemorySearchItem, MemorySearchScope } from '#shared/api/memory.js';
import { dayOf, matchExpression, queryTerms, turnLines } from './text.js';
import type { TurnRow } from './transcript.js';

/** A term in more turns than this is "common" (see turnHits). */
export const COMMON_TERM_ROWS = 1000;
/** Term counts stop here: enough to tell common terms apart cheaply. */
const COUNTED_ROWS = 5000;
/** When every term is common, how many of the least common are searched. */
const COMMON_TERMS_KEPT = 3;

export interface TurnHit {
  id: number;
  conversationId: string;
  /** The better of the two sides' BM25 scores (positive, higher is better). */
  score: number;
}

type Kind = 'turns' | 'termRows' | 'recentCutoff' | 'episodes' | 'facts' | 'identity';

/** The statements of one agent's lexical search, on that agent's own FTS tables ({turns}, {episodes}, …). */
const SQL: Record<Kind, string> = {
  turns: `SELECT t.id, t.conversation_id, -bm25({turns}, 1, 0) AS user_score, -bm25({turns}, 0, 1) AS assistant_score
    FROM {turns} JOIN memory_turns t ON t.id = {turns}.rowid
    WHERE {turns} MATCH ? AND t.agent_id = ? AND {turns}.rowid >= ? ORDER BY bm25({turns}) LIMIT ?`,
  // Bounded counts: how many of the agent's turns contain a term, up to COUNTED_ROWS.
  termRows: 'SELECT COUNT(*) AS n FROM (SELECT rowid FROM {turns} WHERE {turns} MATCH ? LIMIT ?)',
  recentCutoff: 'SELECT rowid FROM {turns} WHERE {turns} MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?',
  episodes: `SELECT e.id, e.summary, e.decisions, e.session_date, e.created_at, -bm25({episodes}) AS score
    FROM {episodes} JOIN memory_episodes e ON e.id = {episodes}.rowid
    WHERE {episodes} MATCH ? AND e.agent_id = ? ORDER BY rank LIMIT ?`,
  facts: `SELECT f.id, f.text, f.session_date, f.created_at, -bm25({facts}) AS score
    FROM {facts} JOIN memory_facts f ON f.id = {facts}.rowid
    WHERE {facts} MATCH ? AND f.agent_id = ? AND f.status = 'pinned' ORDER BY rank LIMIT ?`,
  identity: `SELECT i.id, i.key, i.value, i.updated_at, -bm25({identity}) AS score
    FROM {identity} JOIN memory_identity i ON i.id = {identity}.rowid
    WHERE {identity} MATCH ? AND i.agent_id = ? ORDER BY rank LIMIT ?`,
};

type EpisodeRow = { id: number; summary: string; decisions: string; session_date: string | null; created_at: number; score: number };
type FactRow = { id: number; text: string; session_date: string | null; created_at: number; score: number };
type IdentityRow = { id: number; key: string; value: string; updated_at: number; score: number };

/**
 * Lexical search (FTS5, porter stemming) over one agent's materials, on that agent's own
 * full-text tables (memory/fts-namespaces.ts): it never reads another agent's rows, and no
 * score depends on them.
 */
export class LexicalSearch {
  private readonly turnRowsById;
  private readonly prepared = new Map<string, Statement>();

  constructor(
    private readonly db: Db,
    private readonly namespaces: FtsNamespaces,
  ) {
    // CROSS JOIN keeps the plan on primary-key lookups rather than a scan of the agent's index.
    this.turnRowsById = db.prepare<[string, string], TurnRow>(
      'SELECT t.* FROM json_each(?) AS j CROSS JOIN memory_turns t ON t.id = j.value WHERE t.agent_id = ?',
    );
    namespaces.onDrop((agentId) => {
      for (const key of this.prepared.keys()) if (key.startsWith(`${agentId}\n`)) this.prepared.delete(key);
    });
  }

  /** Runs one of the agent's statements; no rows when the agent's index was removed. */
  private all<Row>(agentId: string, kind: Kind, ...parameters: unknown[]): Row[] {
    return (this.statement(agentId, kind)?.all(...parameters) as Row[] | undefined) ?? [];
  }

  private statement(agentId: string, kind: Kind): Statement | undefined {
    const key = `${agentId}\n${kind}`;
    const known = this.prepared.get(key);
    if (known) return known;
    const n = this.namespaces.ensure(agentId);
    if (n === undefined) return undefined;
    const sql = SQL[kind].replace(/\{(turns|episodes|facts|identity)\}/g, (_, table: string) => tableName(n, `memory_${table}` as IndexedTable));
    const statement = this.db.prepare(sql);
    this.prepared.set(key, statement);
    return statement;
  }

  /**
   * The transcript turns matching a query, best first. Terms found in more than
   * COMMON_TERM_ROWS turns carry almost no weight in BM25 but cost the most to score: they are
   * left out when rarer terms exist; when every term is that common, only the most recent
   * matches are scored. This keeps search fast on large transcripts.
   */
  turnHits(agentId: string, query: string, limit: number): TurnHit[] {
    const terms = queryTerms(query)
      .map((term) => ({ term, rows: this.all<{ n: number }>(agentId, 'termRows', matchExpression([term])!, COUNTED_ROWS)[0]?.n ?? 0 }))
      .filter((entry) => entry.rows > 0);
    if (terms.length === 0) return [];
    const run = (match: string, fromRowid: number) =>
      this.all<{ id: number; conversation_id: string; user_score: number; assistant_score: number }>(agentId, 'turns', match, agentId, fromRowid, limit).map(
        (row) => ({ id: row.id, conversationId: row.conversation_id, score: Math.max(row.user_score, row.assistant_score) }),
      );
    const rare = terms.filter((entry) => entry.rows <= COMMON_TERM_ROWS).map((entry) => entry.term);
    if (rare.length > 0) return run(matchExpression(rare)!, 0);
    // Every term is common: the turns with all of the least common few first; failing enough of
    // those, the recent turns with any of them.
    const fewest = terms
      .sort((a, b) => a.rows - b.rows)
      .slice(0, COMMON_TERMS_KEPT)
      .map((entry) => entry.term);
    const together = fewest.length > 1 ? run(fewest.map((term) => matchExpression([term])).join(' AND '), 0) : [];
    if (together.length >= Math.min(limit, 10)) return together;
    const any = matchExpression(fewest)!;
    const recent = run(any, this.all<{ rowid: number }>(agentId, 'recentCutoff', any, COMMON_TERM_ROWS)[0]?.rowid ?? 0);
    const seen = new Set(together.map((hit) => hit.id));
    return [...together, ...recent.filter((hit) => !seen.has(hit.id))].slice(0, limit);
  }

  turnRows(agentId: string, ids: number[]): Map<number, TurnRow> {
    const rows = this.turnRowsById.all(JSON.stringify(ids), agentId);
    return new Map(rows.map((row) => [row.id, row]));
  }

  search(agentId: string, query: string, scope: MemorySearchScope, limit: number): MemorySearchItem[] {
    const match = matchExpression(queryTerms(query));
    if (!match) return [];
    if (scope === 'transcript') {
      const hits = this.turnHits(agentId, query, limit).sort((a, b) => b.score - a.score);
      const rows = this.turnRows(
        agentId,
        hits.map((hit) => hit.id),
      );
      return hits.flatMap((hit) => {
        const row = rows.get(hit.id);
        if (!row) return [];
        const text = turnLines(row.user_text, row.assistant_text).join('\n');
        return [
          { text, score: round(hit.score), material: 'transcript' as const, source_id: `turn_${row.id}`, date: dateOf(row.session_date, row.created_at) },
        ];
      });
    }
    if (scope === 'episodes') {
      return this.episodes(agentId, match, limit).map((row) => ({
        text: episodeText(row),
        score: round(row.score),
        material: 'episode' as const,
        source_id: `episode_${row.id}`,
        date: dateOf(row.session_date, row.created_at),
      }));
    }
    return this.facts(agentId, match, limit).map((row) => ({
      text: row.text,
      score: round(row.score),
      material: 'pinned' as const,
      source_id: `fact_${row.id}`,
      date: dateOf(row.session_date, row.created_at),
    }));
  }

  /** Items by record id (for vector hits lexical search did not find); pinned facts only for "pinned". */
  byIds(agentId: string, scope: MemorySearchScope, ids: number[]): Map<number, MemorySearchItem> {
    const list = JSON.stringify(ids);
    if (scope === 'transcript') {
      return new Map(
        [...this.turnRows(agentId, ids).values()].map((row) => [
          row.id,
          {
            text: turnLines(row.user_text, row.assistant_text).join('\n'),
            score: 0,
            material: 'transcript' as const,
            source_id: `turn_${row.id}`,
            date: dateOf(row.session_date, row.created_at),
          },
        ]),
      );
    }
    if (scope === 'episodes') {
      const rows = this.db
        .prepare<[string, string], { id: number; summary: string; decisions: string; session_date: string | null; created_at: number }>(
          'SELECT e.* FROM json_each(?) AS j CROSS JOIN memory_episodes e ON e.id = j.value WHERE e.agent_id = ?',
        )
        .all(list, agentId);
      return new Map(
        rows.map((row) => [
          row.id,
          { text: episodeText(row), score: 0, material: 'episode' as const, source_id: `episode_${row.id}`, date: dateOf(row.session_date, row.created_at) },
        ]),
      );
    }
    const rows = this.db
      .prepare<[string, string], { id: number; text: string; session_date: string | null; created_at: number }>(
        `SELECT f.* FROM json_each(?) AS j CROSS JOIN memory_facts f ON f.id = j.value WHERE f.agent_id = ? AND f.status = 'pinned'`,
      )
      .all(list, agentId);
    return new Map(
      rows.map((row) => [
        row.id,
        { text: row.text, score: 0, material: 'pinned' as const, source_id: `fact_${row.id}`, date: dateOf(row.session_date, row.created_at) },
      ]),
    );
  }

  /** Identity entries matching a query (not a search scope of its own: identity is small and listed whole). */
  identity(agentId: string, match: string, limit: number): IdentityRow[] {
    return this.all<IdentityRow>(agentId, 'identity', match, agentId, limit);
  }

  episodes(agentId: string, match: string, limit: number): EpisodeRow[] {
    return this.all<EpisodeRow>(agentId, 'episodes', match, agentId, limit);
  }

  facts(agentId: string, match: string, limit: number): FactRow[] {
    return this.all<FactRow>(agentId, 'facts', match, agentId, limit);
  }
}

export function episodeText(row: { summary: string; decisions: string; session_date: string | null; created_at: number }): string {
  const decisions = JSON.parse(row.decisions) as string[];
  const tail = decisions.length > 0 ? ` Decisions: ${decisions.join('; ')}.` : '';
  return `[${dayOf(row.session_date, row.created_at)}] ${row.summary}${tail}`;
}

export function dateOf(sessionDate: string | null, createdAt: number): string {
  return sessionDate ?? new Date(createdAt).toISOString();
}

/** Six significant digits: BM25 scores of small collections are tiny but still ordered. */
function round(score: number): number {
  return Number(score.toPrecision(6));
}
