import * as sqliteVec from 'sqlite-vec';
import type { Logger } from '../logger.js';
import type { Db } from '../store/database.js';
import { STAGED_PREFIX } from './fts-namespaces.js';
import type { Embedder, EmbeddingModels } from './embedder.js';

export type VectorMaterial = 'transcript' | 'episode' | 'pinned';
const CODE: Record<VectorMaterial, number> = { transcript: 0, episode: 1, pinned: 2 };
const BATCH = 32;

/** What each material embeds: the text a search on it should be matched against. */
const PENDING: Record<VectorMaterial, string> = {
  transcript: `SELECT id, agent_id, user_text || char(10) || assistant_text AS text FROM memory_turns`,
  episode: `SELECT id, agent_id, summary || ' ' || topics AS text FROM memory_episodes`,
  pinned: `SELECT id, agent_id, text FROM memory_facts`,
};

/**
 * Vectors for hybrid search (sqlite-vec), filled in the background after records are written.
 * Vectors are partitioned by agent, so a nearest-neighbour query only ever sees one agent's.
 */
export class VectorIndex {
  readonly available: boolean;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private key: string | undefined;

  constructor(
    private readonly db: Db,
    private readonly models: EmbeddingModels,
    private readonly log: Logger,
  ) {
    let available = false;
    try {
      sqliteVec.load(db);
      available = true;
    } catch (error) {
      log.warn({ err: error }, 'sqlite-vec could not be loaded; memory search stays lexical');
    }
    this.available = available;
  }

  /** Starts (or re-runs) the background pass that embeds records without vectors. */
  schedule(): void {
    if (!this.available || this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.fill()
      .catch((error: unknown) => this.log.warn({ err: error }, 'memory embedding pass failed'))
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.closed) {
          this.again = false;
          this.schedule();
        }
      });
  }

  /** Resolves once no embedding pass is running (for tests and shutdown). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Nearest records of one agent and material, best first; undefined when hybrid search is off. */
  async nearest(agentId: string, material: VectorMaterial, query: string, k: number): Promise<{ recordId: number; distance: number }[] | undefined> {
    const embedder = this.available ? await this.models.embedder() : undefined;
    if (!embedder || !this.ready(embedder)) return undefined;
    const vector = await embedder.embed(query);
    return this.db
      .prepare<[Float32Array, number, string, string], { rowid: number; distance: number }>(
        'SELECT rowid, distance FROM memory_vectors WHERE embedding MATCH ? AND k = ? AND agent_id = ? AND material = ?',
      )
      .all(vector, k, agentId, material)
      .map((row) => ({ recordId: Math.floor(Number(row.rowid) / 4), distance: row.distance }));
  }

  /** Drops an agent's vectors (index removal and purge); a rebuild embeds its records again. */
  forgetAgent(agentId: string): void {
    if (!this.tableExists()) return void this.db.prepare('DELETE FROM memory_vector_rows WHERE agent_id = ?').run(agentId);
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM memory_vectors WHERE rowid IN (SELECT id FROM memory_vector_rows WHERE agent_id = ?)').run(agentId);
      this.db.prepare('DELETE FROM memory_vector_rows WHERE agent_id = ?').run(agentId);
    })();
  }

  /** Drops one record's vector (its text changed); the next pass embeds it again. */
  forgetRecord(material: VectorMaterial, recordId: number): void {
    const id = recordId * 4 + CODE[material];
    if (this.tableExists()) this.db.prepare('DELETE FROM memory_vectors WHERE rowid = ?').run(BigInt(id));
    this.db.prepare('DELETE FROM memory_vector_rows WHERE id = ?').run(id);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.settled();
    await this.models.close();
  }

  private async fill(): Promise<void> {
    const embedder = await this.models.embedder();
    if (!embedder) return;
    this.prepareTable(embedder);
    for (const material of Object.keys(CODE) as VectorMaterial[]) {
      let after = 0;
      for (;;) {
        if (this.closed) return;
        const rows = this.db
          .prepare<[number, number], { id: number; agent_id: string; text: string }>(
            `SELECT * FROM (${PENDING[material]}) AS r WHERE r.id > ? AND NOT EXISTS (SELECT 1 FROM memory_vector_rows v WHERE v.id = r.id * 4 + ${CODE[material]})
             AND NOT EXISTS (SELECT 1 FROM memory_index_removed x WHERE x.agent_id = r.agent_id) AND r.agent_id NOT LIKE '${STAGED_PREFIX}%' ORDER BY r.id LIMIT ?`,
          )
          .all(after, BATCH);
        if (rows.length === 0) break;
        const vectors: Float32Array[] = [];
        for (const row of rows) vectors.push(await embedder.embed(row.text));
        if (this.closed || !this.ready(embedder)) return;
        this.db.transaction(() => {
          rows.forEach((row, index) => {
            const id = row.id * 4 + CODE[material];
            // The record may have been deleted while it was being embedded.
            if (!this.db.prepare(`SELECT 1 FROM (${PENDING[material]}) AS r WHERE r.id = ?`).get(row.id)) return;
            this.db
              .prepare('INSERT OR IGNORE INTO memory_vector_rows (id, agent_id, material, record_id) VALUES (?, ?, ?, ?)')
              .run(id, row.agent_id, material, row.id);
            this.db
              .prepare('INSERT INTO memory_vectors (rowid, agent_id, material, embedding) VALUES (?, ?, ?, ?)')
              .run(BigInt(id), row.agent_id, material, vectors[index]!);
          });
        })();
        after = rows.at(-1)!.id;
      }
    }
  }

  private ready(embedder: Embedder): boolean {
    return this.key === embedder.key || (this.currentKey() === embedder.key && this.tableExists());
  }

  /** One vector table per embedding model: a different model (or size) starts it afresh. */
  private prepareTable(embedder: Embedder): void {
    if (this.ready(embedder)) {
      this.key = embedder.key;
      return;
    }
    this.db.transaction(() => {
      this.db.exec('DROP TABLE IF EXISTS memory_vectors; DELETE FROM memory_vector_rows;');
      this.db.exec(
        `CREATE VIRTUAL TABLE memory_vectors USING vec0(agent_id text partition key, material text, embedding float[${embedder.dimensions}] distance_metric=cosine)`,
      );
      this.db.prepare(`INSERT OR REPLACE INTO memory_state (key, value) VALUES ('vector_model', ?)`).run(embedder.key);
    })();
    this.key = embedder.key;
  }

  private currentKey(): string | undefined {
    return this.db.prepare<[], { value: string }>(`SELECT value FROM memory_state WHERE key = 'vector_model'`).get()?.value;
  }

  private tableExists(): boolean {
    return this.db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'memory_vectors'`).get() !== undefined;
  }
}
