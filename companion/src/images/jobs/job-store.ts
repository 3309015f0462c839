/** Image jobs in SQLite: every state change a caller can see is committed before it is reported. */
import type { ErrorBody } from '#shared/api/errors.js';
import type { ImageJob, ImageJobResult, ImageJobStatus, ImageOperation } from '#shared/api/images.js';
import type { Db } from '../../store/database.js';

/** A job as stored: the wire job's plain fields, the others as JSON text, times in milliseconds. */
interface Row extends Pick<ImageJob, 'id' | 'operation' | 'model' | 'status' | 'step' | 'steps' | 'prompt' | 'negative_prompt' | 'size' | 'seed'> {
  notes_json: string;
  results_json: string;
  error_json: string | null;
  cancel_requested: number;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  owner_key: string | null;
}

export interface NewJob {
  id: string;
  operation: ImageOperation;
  model: string;
  steps: number;
  prompt: string | null;
  negativePrompt: string | null;
  size: string | null;
  seed: number | null;
  /** The access key that asked for it; null without a key. */
  owner: string | null;
}

/**
 * Whose jobs a caller may see, cancel and delete: a key sees the jobs it made; a caller without
 * a key (the app and every local client while auth is off) sees every job.
 */
export type JobViewer = { all: true } | { key: string };

export const EVERY_JOB: JobViewer = { all: true };

const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));
const TERMINAL = new Set<ImageJobStatus>(['completed', 'failed', 'cancelled']);

export function isTerminal(status: ImageJobStatus): boolean {
  return TERMINAL.has(status);
}

export class ImageJobStore {
  constructor(private readonly db: Db) {}

  create(job: NewJob): void {
    this.db
      .prepare(
        `INSERT INTO image_jobs (id, operation, model, status, steps, prompt, negative_prompt, size, seed, created_at, owner_key)
         VALUES (?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(job.id, job.operation, job.model, job.steps, job.prompt, job.negativePrompt, job.size, job.seed, Date.now(), job.owner);
  }

  /** The job, when `viewer` may see it. */
  get(id: string, viewer: JobViewer = EVERY_JOB): ImageJob | undefined {
    const row = this.db.prepare<[string], Row>('SELECT * FROM image_jobs WHERE id = ?').get(id);
    return row && sees(viewer, row.owner_key) ? toJob(row) : undefined;
  }

  /** Newest first: the gallery (of `viewer`'s jobs). */
  list(limit: number, status: ImageJobStatus | undefined, viewer: JobViewer): ImageJob[] {
    const owner = 'key' in viewer ? viewer.key : null;
    const rows = this.db
      .prepare<{ status: string | null; owner: string | null; limit: number }, Row>(
        `SELECT * FROM image_jobs WHERE (@status IS NULL OR status = @status) AND (@owner IS NULL OR owner_key = @owner)
         ORDER BY created_at DESC, rowid DESC LIMIT @limit`,
      )
      .all({ status: status ?? null, owner, limit });
    return rows.map(toJob);
  }

  stage(id: string, status: 'preparing' | 'generating', steps?: number): void {
    if (status === 'preparing') this.db.prepare("UPDATE image_jobs SET status = 'preparing', started_at = ? WHERE id = ?").run(Date.now(), id);
    else this.db.prepare("UPDATE image_jobs SET status = 'generating', steps = COALESCE(?, steps) WHERE id = ?").run(steps ?? null, id);
  }

  progress(id: string, step: number, steps: number): void {
    this.db.prepare('UPDATE image_jobs SET step = ?, steps = ? WHERE id = ?').run(step, steps, id);
  }

  /** Also fills in the seed when it was chosen for the request. */
  note(id: string, note: string): void {
    this.db.prepare("UPDATE image_jobs SET notes_json = json_insert(notes_json, '$[#]', ?) WHERE id = ?").run(note, id);
  }

  requestCancel(id: string): void {
    this.db.prepare('UPDATE image_jobs SET cancel_requested = 1 WHERE id = ?').run(id);
  }

  complete(id: string, results: ImageJobResult[]): void {
    this.db
      .prepare("UPDATE image_jobs SET status = 'completed', results_json = ?, finished_at = ?, step = steps WHERE id = ?")
      .run(JSON.stringify(results), Date.now(), id);
  }

  finish(id: string, status: 'failed' | 'cancelled', error: ErrorBody['error'] | null): void {
    this.db
      .prepare('UPDATE image_jobs SET status = ?, error_json = ?, finished_at = ? WHERE id = ?')
      .run(status, error ? JSON.stringify(error) : null, Date.now(), id);
  }

  delete(id: string): boolean {
    return this.db.prepare('DELETE FROM image_jobs WHERE id = ?').run(id).changes > 0;
  }

  /** Jobs left unfinished by a process that stopped (crash, SIGKILL): they did not finish. */
  failInterrupted(error: ErrorBody['error']): number {
    return this.db
      .prepare("UPDATE image_jobs SET status = 'failed', error_json = ?, finished_at = ? WHERE status IN ('queued', 'preparing', 'generating')")
      .run(JSON.stringify(error), Date.now()).changes;
  }
}

function sees(viewer: JobViewer, owner: string | null): boolean {
  return 'all' in viewer || viewer.key === owner;
}

function toJob(row: Row): ImageJob {
  return {
    id: row.id,
    object: 'image.job',
    operation: row.operation,
    model: row.model,
    status: row.status,
    step: row.step,
    steps: row.steps,
    prompt: row.prompt,
    negative_prompt: row.negative_prompt,
    size: row.size,
    seed: row.seed,
    created_at: seconds(row.created_at)!,
    started_at: seconds(row.started_at),
    finished_at: seconds(row.finished_at),
    cancel_requested: row.cancel_requested === 1,
    notes: JSON.parse(row.notes_json) as string[],
    results: JSON.parse(row.results_json) as ImageJobResult[],
    error: row.error_json ? (JSON.parse(row.error_json) as ErrorBody['error']) : null,
  };
}
