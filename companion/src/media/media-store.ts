/** Hosted media quotes and jobs in SQLite; a quote is used at most once. */
import type { MediaJob, MediaOrder } from '#shared/api/media.js';
import type { Db } from '../store/database.js';

/** A quote as stored: the order, with times in milliseconds. */
export interface QuoteRow extends MediaOrder {
  id: string;
  input_image: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  /** The access key that asked for the quote (its job is that key's too); null without a key. */
  owner_key: string | null;
}

/** A job as stored: the wire job's own fields, with times in milliseconds (the provider's expiry in its seconds). */
export interface JobRow extends MediaOrder, Pick<MediaJob, 'id' | 'quote_id' | 'status' | 'progress' | 'remote_id' | 'remote_expires_at'> {
  created_at: number;
  submitted_at: number | null;
  completed_at: number | null;
  artifact: string | null;
  error_json: string | null;
  owner_key: string | null;
  /** 1 when Hearth knows the provider never made the job (a clear refusal, or no record of it): only then is it not spent. */
  not_created: number;
}

const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

export class MediaStore {
  constructor(private readonly db: Db) {}

  addQuote(quote: QuoteRow): void {
    this.db
      .prepare(
        `INSERT INTO media_quotes (id, provider, model, operation, prompt, seconds, size, cost_usd, input_image, created_at, expires_at, owner_key)
         VALUES (@id, @provider, @model, @operation, @prompt, @seconds, @size, @cost_usd, @input_image, @created_at, @expires_at, @owner_key)`,
      )
      .run(quote);
  }

  quote(id: string): QuoteRow | undefined {
    return this.db.prepare<[string], QuoteRow>('SELECT * FROM media_quotes WHERE id = ?').get(id);
  }

  /**
   * Spending since a time: every job that was or may have been made. Only a job Hearth knows the
   * provider never created is left out; one the provider failed, one that expired before it was
   * copied, and one whose submission is still being looked up all count.
   */
  spentSince(startMs: number): number {
    const row = this.db
      .prepare<[number], { total: number | null }>('SELECT SUM(cost_usd) AS total FROM media_jobs WHERE created_at >= ? AND not_created = 0')
      .get(startMs);
    return row?.total ?? 0;
  }

  /** Whether a job already follows this provider video (a lookup must not claim it twice). */
  providerVideoTaken(provider: string, videoId: string): boolean {
    return this.db.prepare('SELECT 1 FROM media_jobs WHERE provider = ? AND remote_id = ?').get(provider, videoId) !== undefined;
  }

  /**
   * Stored first frames no longer needed: those of quotes that expired unused, and those of used
   * quotes whose job was sent (or is known never to have been made).
   */
  unneededInputs(now: number): { id: string; input_image: string }[] {
    return this.db
      .prepare<[number], { id: string; input_image: string }>(
        `SELECT q.id, q.input_image FROM media_quotes q LEFT JOIN media_jobs j ON j.quote_id = q.id
         WHERE q.input_image IS NOT NULL AND (
           (q.used_at IS NULL AND q.expires_at <= ?) OR
           (j.id IS NOT NULL AND (j.remote_id IS NOT NULL OR j.not_created = 1 OR j.status != 'submitting')))`,
      )
      .all(now);
  }

  forgetInput(quoteId: string): void {
    this.db.prepare('UPDATE media_quotes SET input_image = NULL WHERE id = ?').run(quoteId);
  }

  /** Marks the quote used and creates its job in one transaction: a quote buys one job. */
  createJob(quote: QuoteRow, id: string, now: number): boolean {
    return this.db.transaction(() => {
      const used = this.db.prepare('UPDATE media_quotes SET used_at = ? WHERE id = ? AND used_at IS NULL').run(now, quote.id).changes;
      if (used === 0) return false;
      this.db
        .prepare(
          `INSERT INTO media_jobs (id, quote_id, provider, model, operation, prompt, seconds, size, cost_usd, status, created_at, owner_key)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'submitting', ?, ?)`,
        )
        .run(id, quote.id, quote.provider, quote.model, quote.operation, quote.prompt, quote.seconds, quote.size, quote.cost_usd, now, quote.owner_key);
      return true;
    })();
  }

  job(id: string): JobRow | undefined {
    return this.db.prepare<[string], JobRow>('SELECT * FROM media_jobs WHERE id = ?').get(id);
  }

  /** Newest first; `owner` set: that key's jobs only. */
  jobs(limit: number, owner: string | null): JobRow[] {
    return this.db
      .prepare<{ limit: number; owner: string | null }, JobRow>(
        'SELECT * FROM media_jobs WHERE @owner IS NULL OR owner_key = @owner ORDER BY created_at DESC, rowid DESC LIMIT @limit',
      )
      .all({ limit, owner });
  }

  unfinished(): JobRow[] {
    return this.db.prepare<[], JobRow>("SELECT * FROM media_jobs WHERE status NOT IN ('completed', 'failed') ORDER BY created_at").all();
  }

  /** Records what the provider said: its id, status, progress and expiry. */
  update(
    id: string,
    fields: Partial<
      Pick<JobRow, 'status' | 'progress' | 'remote_id' | 'submitted_at' | 'completed_at' | 'remote_expires_at' | 'artifact' | 'error_json' | 'not_created'>
    >,
  ): void {
    const keys = Object.keys(fields) as (keyof typeof fields)[];
    if (keys.length === 0) return;
    this.db.prepare(`UPDATE media_jobs SET ${keys.map((key) => `${key} = @${key}`).join(', ')} WHERE id = @id`).run({ ...fields, id });
  }
}

/** The order of a quote or job row, field by field (a row holds more). */
export function orderOf(row: MediaOrder): MediaOrder {
  const { provider, model, operation, prompt, seconds, size, cost_usd } = row;
  return { provider, model, operation, prompt, seconds, size, cost_usd };
}

export function toMediaJob(row: JobRow): MediaJob {
  return {
    id: row.id,
    object: 'media.job',
    quote_id: row.quote_id,
    ...orderOf(row),
    status: row.status,
    progress: row.progress,
    remote_id: row.remote_id,
    created_at: seconds(row.created_at)!,
    submitted_at: seconds(row.submitted_at),
    completed_at: seconds(row.completed_at),
    remote_expires_at: row.remote_expires_at,
    content_url: row.status === 'completed' && row.artifact ? `/v1/media/jobs/${row.id}/content` : null,
    error: row.error_json ? (JSON.parse(row.error_json) as MediaJob['error']) : null,
  };
}
