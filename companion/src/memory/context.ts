import type { Db } from '../store/database.js';
import type { MemoryContextItem } from '#shared/api/memory.js';
import { dateOf, episodeText, type LexicalSearch, type TurnHit } from './search.js';
import { dayOf, estimateTokens, matchExpression, queryTerms, turnLines, wordSet } from './text.js';
import type { TurnRow } from './transcript.js';

/** How recall weighs a turn's neighbours and its session against its own match (see docs/memory.md). */
const NEIGHBOUR_WEIGHT = 0.4;
const SESSION_WEIGHT = 0.8;
const CANDIDATES = 400;
/** Distilled material (identity, facts, episodes) may take at most this share of the budget ... */
const DISTILLED_SHARE = 0.25;
/** ... and only items that cover at least this share of the query's words. */
const DISTILLED_COVERAGE = 0.5;

interface Candidate {
  id: number;
  session: string;
  score: number;
}

/**
 * Budgeted recall: the items that would be injected into a request, in order, never over the
 * budget. Distilled items come first when they clearly match; the rest of the budget goes to
 * transcript evidence: turns scored with their neighbours and their session (the words of a
 * question often sit in the other speaker's reply), packed as one block per session with a
 * single date header.
 */
export class ContextBuilder {
  private readonly previous;
  private readonly next;

  constructor(
    db: Db,
    private readonly search: LexicalSearch,
  ) {
    this.previous = db.prepare<[string, string, number], { id: number | null }>(
      'SELECT MAX(id) AS id FROM memory_turns WHERE agent_id = ? AND conversation_id = ? AND id < ?',
    );
    this.next = db.prepare<[string, string, number], { id: number | null }>(
      'SELECT MIN(id) AS id FROM memory_turns WHERE agent_id = ? AND conversation_id = ? AND id > ?',
    );
  }

  build(agentId: string, query: string, budget: number): { items: MemoryContextItem[]; tokens: number } {
    const terms = queryTerms(query);
    const match = matchExpression(terms);
    if (!match) return { items: [], tokens: 0 };
    const distilled = this.distilled(agentId, match, terms, Math.floor(budget * DISTILLED_SHARE));
    const used = distilled.reduce((sum, item) => sum + estimateTokens(item.text), 0);
    const transcript = this.transcript(agentId, query, budget - used);
    const items = [...distilled, ...transcript];
    return { items, tokens: items.reduce((sum, item) => sum + estimateTokens(item.text), 0) };
  }

  private distilled(agentId: string, match: string, terms: string[], share: number): MemoryContextItem[] {
    const wanted = [...wordSet(terms.join(' '))];
    const relevant = (text: string) => {
      const words = wordSet(text);
      const covered = wanted.filter((word) => words.has(word)).length;
      return covered >= Math.min(2, wanted.length) && covered / wanted.length >= DISTILLED_COVERAGE;
    };
    const found: MemoryContextItem[] = [
      ...this.search.identity(agentId, match, 5).map((row) => ({
        text: `${row.key}: ${row.value}`,
        material: 'identity' as const,
        source_id: `identity_${row.id}`,
        date: new Date(row.updated_at).toISOString(),
      })),
      ...this.search
        .facts(agentId, match, 10)
        .map((row) => ({ text: row.text, material: 'pinned' as const, source_id: `fact_${row.id}`, date: dateOf(row.session_date, row.created_at) })),
      ...this.search.episodes(agentId, match, 5).map((row) => ({
        text: episodeText(row),
        material: 'episode' as const,
        source_id: `episode_${row.id}`,
        date: dateOf(row.session_date, row.created_at),
      })),
    ];
    const chosen: MemoryContextItem[] = [];
    let used = 0;
    for (const item of found) {
      const cost = estimateTokens(item.text);
      if (!relevant(item.text) || used + cost > share) continue;
      chosen.push(item);
      used += cost;
    }
    return chosen;
  }

  private transcript(agentId: string, query: string, budget: number): MemoryContextItem[] {
    const hits = this.search.turnHits(agentId, query, CANDIDATES);
    if (hits.length === 0 || budget <= 0) return [];
    const ranked = this.rank(agentId, hits);
    const rows = this.search.turnRows(
      agentId,
      ranked.map((candidate) => candidate.id),
    );
    return pack(ranked, rows, budget);
  }

  /** Own score + neighbours' scores + the session's best score. */
  private rank(agentId: string, hits: TurnHit[]): Candidate[] {
    const own = new Map(hits.map((hit) => [hit.id, hit.score]));
    const rows = this.search.turnRows(
      agentId,
      hits.map((hit) => hit.id),
    );
    const sessionOf = (row: TurnRow) => `${row.conversation_id}\u0000${dayOf(row.session_date, row.created_at)}`;
    const sessionBest = new Map<string, number>();
    for (const hit of hits) {
      const row = rows.get(hit.id);
      if (row) sessionBest.set(sessionOf(row), Math.max(sessionBest.get(sessionOf(row)) ?? 0, hit.score));
    }
    const adjacent = this.adjacent(agentId, hits);
    const candidates = hits.flatMap((hit) => {
      const row = rows.get(hit.id);
      if (!row) return [];
      const [previous, next] = adjacent.get(hit.id) ?? [];
      const around = (previous === undefined ? 0 : (own.get(previous) ?? 0)) + (next === undefined ? 0 : (own.get(next) ?? 0));
      const session = sessionOf(row);
      return [{ id: hit.id, session, score: hit.score + NEIGHBOUR_WEIGHT * around + SESSION_WEIGHT * (sessionBest.get(session) ?? 0) }];
    });
    return candidates.sort((a, b) => b.score - a.score || a.id - b.id);
  }

  /** The previous and next turn of each hit in its own conversation. */
  private adjacent(agentId: string, hits: TurnHit[]): Map<number, [number | undefined, number | undefined]> {
    const result = new Map<number, [number | undefined, number | undefined]>();
    for (const hit of hits) {
      const previous = this.previous.get(agentId, hit.conversationId, hit.id)?.id ?? undefined;
      const next = this.next.get(agentId, hit.conversationId, hit.id)?.id ?? undefined;
      result.set(hit.id, [previous, next]);
    }
    return result;
  }
}

/** Greedy by score; turns of one session share a block and its date header; blocks ordered by their best turn. */
function pack(ranked: Candidate[], rows: Map<number, TurnRow>, budget: number): MemoryContextItem[] {
  const blocks = new Map<string, { header: string; lines: Map<number, string>; chars: number; first: number; date: string }>();
  let used = 0;
  for (const candidate of ranked) {
    const row = rows.get(candidate.id);
    if (!row) continue;
    const text = turnLines(row.user_text, row.assistant_text).join('\n');
    if (!text) continue;
    const block = blocks.get(candidate.session);
    const before = block ? Math.ceil(block.chars / 4) : 0;
    const header = `[${dayOf(row.session_date, row.created_at)}]`;
    const chars = block ? block.chars + 1 + text.length : header.length + 1 + text.length;
    const cost = Math.ceil(chars / 4) - before;
    if (used + cost > budget) continue;
    used += cost;
    if (block) {
      block.lines.set(row.id, text);
      block.chars = chars;
      block.first = Math.min(block.first, row.id);
    } else {
      blocks.set(candidate.session, { header, lines: new Map([[row.id, text]]), chars, first: row.id, date: dateOf(row.session_date, row.created_at) });
    }
  }
  return [...blocks.values()].map((block) => ({
    text: [block.header, ...[...block.lines.entries()].sort((a, b) => a[0] - b[0]).map(([, line]) => line)].join('\n'),
    material: 'transcript' as const,
    source_id: `turn_${block.first}`,
    date: block.date,
  }));
}
