import type { Db } from '../store/database.js';
import type { FtsNamespaces } from './fts-namespaces.js';
import type { Extraction } from './extraction.js';
import { matchExpression, queryTerms, similarity, wordSet } from './text.js';

/** Two facts at least this similar (word-set Jaccard) are one fact: the newer supports the older. */
export const DUPLICATE_FACT_SIMILARITY = 0.75;
const INITIAL_SALIENCE = 1;

export interface Applied {
  episodes: number;
  factsAdded: number;
  factsMerged: number;
}

export interface ExtractionSource {
  agentId: string;
  conversationId: string;
  projectId: string | null;
  sessionDate: string | null;
  sessionTime: number | null;
  signalIds: number[];
}

/** Writes distilled records; duplicates of existing facts are merged, never added twice. */
export class MemoryRecords {
  constructor(
    private readonly db: Db,
    private readonly namespaces: FtsNamespaces,
  ) {}

  /** One transaction: the records appear and the signals stop being pending together. */
  apply(source: ExtractionSource, extraction: Extraction, now = Date.now()): Applied {
    return this.db.transaction((): Applied => {
      const { episode } = extraction;
      this.db
        .prepare(
          `INSERT INTO memory_episodes (agent_id, conversation_id, project_id, summary, topics, decisions, session_date, session_time, salience, created_at, updated_at, decayed_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          source.agentId,
          source.conversationId,
          source.projectId,
          episode.summary,
          JSON.stringify(episode.topics),
          JSON.stringify(episode.decisions),
          source.sessionDate,
          source.sessionTime,
          INITIAL_SALIENCE,
          now,
          now,
          now,
        );
      for (const entity of extraction.entities) this.noteEntity(source.agentId, entity.name, entity.kind, now);
      for (const entry of extraction.identity) {
        if (entry.value) this.setIdentity(source.agentId, entry.key, entry.value, 'extraction', now);
        else this.db.prepare(`DELETE FROM memory_identity WHERE agent_id = ? AND key = ? AND source = 'extraction'`).run(source.agentId, entry.key);
      }
      let factsAdded = 0;
      let factsMerged = 0;
      for (const text of extraction.facts) {
        if (
          this.addFact(
            source.agentId,
            text,
            { status: 'candidate', source: 'extraction', conversationId: source.conversationId, sessionDate: source.sessionDate },
            now,
          ).merged
        )
          factsMerged++;
        else factsAdded++;
      }
      const remove = this.db.prepare('DELETE FROM memory_signals WHERE id = ?');
      for (const id of source.signalIds) remove.run(id);
      return { episodes: 1, factsAdded, factsMerged };
    })();
  }

  /** Adds a fact, or supports the existing duplicate (more support, renewed salience; pinning wins). */
  addFact(
    agentId: string,
    text: string,
    options: { status: 'candidate' | 'pinned'; source: 'extraction' | 'user'; conversationId?: string | null; sessionDate?: string | null },
    now = Date.now(),
  ): { id: number; merged: boolean } {
    const duplicate = this.findDuplicateFact(agentId, text);
    if (duplicate !== undefined) {
      this.db
        .prepare(
          `UPDATE memory_facts SET support_count = support_count + 1, salience = MAX(salience, ?), updated_at = ?, decayed_at = ?,
             status = CASE WHEN ? = 'pinned' THEN 'pinned' ELSE status END, source = CASE WHEN ? = 'user' THEN 'user' ELSE source END
           WHERE id = ?`,
        )
        .run(INITIAL_SALIENCE, now, now, options.status, options.source, duplicate);
      return { id: duplicate, merged: true };
    }
    const { lastInsertRowid } = this.db
      .prepare(
        `INSERT INTO memory_facts (agent_id, text, status, source, salience, conversation_id, session_date, created_at, updated_at, decayed_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(agentId, text, options.status, options.source, INITIAL_SALIENCE, options.conversationId ?? null, options.sessionDate ?? null, now, now, now);
    return { id: Number(lastInsertRowid), merged: false };
  }

  findDuplicateFact(agentId: string, text: string, excludeId?: number): number | undefined {
    const match = matchExpression(queryTerms(text));
    const words = wordSet(text);
    const normal = text.trim().toLowerCase();
    const fts = match ? this.namespaces.table(agentId, 'memory_facts') : undefined;
    const candidates = fts
      ? this.db
          .prepare<[string, string], { id: number; text: string }>(
            `SELECT f.id, f.text FROM ${fts} JOIN memory_facts f ON f.id = ${fts}.rowid
             WHERE ${fts} MATCH ? AND f.agent_id = ? ORDER BY rank LIMIT 20`,
          )
          .all(match!, agentId)
      : this.db
          .prepare<[string, string], { id: number; text: string }>('SELECT id, text FROM memory_facts WHERE agent_id = ? AND lower(trim(text)) = ?')
          .all(agentId, normal);
    const found = candidates.find(
      (row) => row.id !== excludeId && (row.text.trim().toLowerCase() === normal || similarity(words, wordSet(row.text)) >= DUPLICATE_FACT_SIMILARITY),
    );
    return found?.id;
  }

  setIdentity(agentId: string, key: string, value: string, source: 'extraction' | 'user', now = Date.now()): void {
    // A person's own entry is not overwritten by extraction.
    this.db
      .prepare(
        `INSERT INTO memory_identity (agent_id, key, value, source, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (agent_id, key) DO UPDATE SET value = excluded.value, source = excluded.source, updated_at = excluded.updated_at
         WHERE excluded.source = 'user' OR memory_identity.source = 'extraction'`,
      )
      .run(agentId, key, value, source, now);
  }

  private noteEntity(agentId: string, name: string, kind: string, now: number): void {
    this.db
      .prepare(
        `INSERT INTO memory_entities (agent_id, name, kind, mentions, first_seen, last_seen) VALUES (?, ?, ?, 1, ?, ?)
         ON CONFLICT (agent_id, name) DO UPDATE SET mentions = mentions + 1, last_seen = excluded.last_seen`,
      )
      .run(agentId, name, kind, now, now);
  }
}
