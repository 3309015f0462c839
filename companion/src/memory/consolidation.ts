import type { Db } from '../store/database.js';
import type { MemorySettings } from '#shared/api/config.js';
import type { MemoryConsolidationReport } from '#shared/api/memory.js';
import { similarity, wordSet } from './text.js';

const DAY_MS = 86_400_000;
/** Salience halves after this many days without support. */
export const SALIENCE_HALF_LIFE_DAYS = 90;
/** Episodes of one agent at least this similar (topics and summary words) are merged. */
export const SIMILAR_EPISODES = 0.6;
/** A candidate fact supported this many times becomes pinned. */
export const PROMOTION_SUPPORT = 2;

interface EpisodeRow {
  id: number;
  summary: string;
  topics: string;
  decisions: string;
  salience: number;
  merged_count: number;
  session_time: number | null;
}

/**
 * Maintenance of one agent's memory (docs/memory.md rule 5): salience decays with time, similar
 * episodes merge, repeatedly supported facts are promoted, and what falls under the salience
 * floor or past retention is pruned. Facts a person pinned are never decayed or pruned.
 */
export function consolidateAgent(
  db: Db,
  agentId: string,
  settings: MemorySettings,
  now = Date.now(),
): Omit<MemoryConsolidationReport, 'agents' | 'signals_distilled'> {
  return db.transaction(() => {
    const decay = (table: string, extra = '') =>
      db
        .prepare(
          `UPDATE ${table} SET salience = salience * pow(0.5, (? - decayed_at) / ?), decayed_at = ?
           WHERE agent_id = ? AND decayed_at < ? ${extra}`,
        )
        .run(now, SALIENCE_HALF_LIFE_DAYS * DAY_MS, now, agentId, now).changes;
    const episodesDecayed = decay('memory_episodes');
    const factsDecayed = decay('memory_facts', `AND status = 'candidate'`);
    const episodesMerged = mergeEpisodes(db, agentId, now);
    const factsPromoted = db
      .prepare(`UPDATE memory_facts SET status = 'pinned', updated_at = ? WHERE agent_id = ? AND status = 'candidate' AND support_count >= ?`)
      .run(now, agentId, PROMOTION_SUPPORT).changes;
    const floor = settings.salience_floor;
    let episodesPruned = db.prepare('DELETE FROM memory_episodes WHERE agent_id = ? AND salience < ?').run(agentId, floor).changes;
    const factsPruned = db.prepare(`DELETE FROM memory_facts WHERE agent_id = ? AND status = 'candidate' AND salience < ?`).run(agentId, floor).changes;
    let turnsPruned = 0;
    if (settings.episode_retention_days > 0) {
      const cutoff = now - settings.episode_retention_days * DAY_MS;
      episodesPruned += db.prepare('DELETE FROM memory_episodes WHERE agent_id = ? AND updated_at < ?').run(agentId, cutoff).changes;
      // Turns still awaiting distillation are kept until they are distilled.
      turnsPruned = db
        .prepare(
          'DELETE FROM memory_turns WHERE agent_id = ? AND created_at < ? AND NOT EXISTS (SELECT 1 FROM memory_signals s WHERE s.turn_id = memory_turns.id)',
        )
        .run(agentId, cutoff).changes;
    }
    return {
      episodes_decayed: episodesDecayed,
      facts_decayed: factsDecayed,
      episodes_merged: episodesMerged,
      facts_promoted: factsPromoted,
      episodes_pruned: episodesPruned,
      facts_pruned: factsPruned,
      turns_pruned: turnsPruned,
    };
  })();
}

/** Greedy single pass, oldest first: each episode absorbs later ones similar to it. */
function mergeEpisodes(db: Db, agentId: string, now: number): number {
  const rows = db
    .prepare<[string], EpisodeRow>(
      'SELECT id, summary, topics, decisions, salience, merged_count, session_time FROM memory_episodes WHERE agent_id = ? ORDER BY id',
    )
    .all(agentId);
  const words = rows.map((row) => wordSet(`${(JSON.parse(row.topics) as string[]).join(' ')} ${row.summary}`));
  const gone = new Set<number>();
  const update = db.prepare(
    'UPDATE memory_episodes SET summary = ?, topics = ?, decisions = ?, salience = ?, merged_count = ?, updated_at = ?, decayed_at = ? WHERE id = ?',
  );
  const remove = db.prepare('DELETE FROM memory_episodes WHERE id = ?');
  let merged = 0;
  rows.forEach((keep, index) => {
    if (gone.has(keep.id)) return;
    for (let other = index + 1; other < rows.length; other++) {
      const absorbed = rows[other]!;
      if (gone.has(absorbed.id) || similarity(words[index]!, words[other]!) < SIMILAR_EPISODES) continue;
      const union = (a: string, b: string) => [...new Set([...(JSON.parse(a) as string[]), ...(JSON.parse(b) as string[])])];
      keep.topics = JSON.stringify(union(keep.topics, absorbed.topics));
      keep.decisions = JSON.stringify(union(keep.decisions, absorbed.decisions));
      // The later summary describes the more recent state; being seen again renews salience.
      keep.summary = absorbed.summary.length >= keep.summary.length / 2 ? absorbed.summary : keep.summary;
      keep.salience = Math.min(1, Math.max(keep.salience, absorbed.salience) + 0.1);
      keep.merged_count += absorbed.merged_count;
      remove.run(absorbed.id);
      gone.add(absorbed.id);
      merged++;
      update.run(keep.summary, keep.topics, keep.decisions, keep.salience, keep.merged_count, now, now, keep.id);
    }
  });
  return merged;
}
