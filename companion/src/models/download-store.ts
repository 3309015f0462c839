/** The rows behind model downloads (SQLite), so a download outlives a page reload and a restart. */
import type { Db } from '../store/database.js';
import type { ModelDownload } from '#shared/api/model-library.js';

/** A download as the manager keeps it: the wire record plus every part's file name. */
export interface DownloadRecord extends Omit<ModelDownload, 'bytes_per_second' | 'created_at' | 'updated_at'> {
  files: string[];
  createdAt: number;
  updatedAt: number;
}

/** A download as stored: the record, its parts as JSON text. */
interface Row extends Omit<DownloadRecord, 'files' | 'createdAt' | 'updatedAt'> {
  files_json: string;
  created_at: number;
  updated_at: number;
}

export class DownloadStore {
  constructor(private readonly db: Db) {}

  list(): DownloadRecord[] {
    return this.db.prepare<[], Row>('SELECT * FROM model_downloads ORDER BY created_at, id').all().map(fromRow);
  }

  get(id: string): DownloadRecord | undefined {
    const row = this.db.prepare<[string], Row>('SELECT * FROM model_downloads WHERE id = ?').get(id);
    return row ? fromRow(row) : undefined;
  }

  insert(record: DownloadRecord): void {
    this.db
      .prepare(
        `INSERT INTO model_downloads (id, source, status, bytes_done, bytes_total, file, files_json, model_id, error, created_at, updated_at)
         VALUES (@id, @source, @status, @bytes_done, @bytes_total, @file, @files_json, @model_id, @error, @created_at, @updated_at)`,
      )
      .run(toRow(record));
  }

  save(record: DownloadRecord): void {
    this.db
      .prepare(
        `UPDATE model_downloads SET status = @status, bytes_done = @bytes_done, bytes_total = @bytes_total, file = @file,
         files_json = @files_json, model_id = @model_id, error = @error, updated_at = @updated_at WHERE id = @id`,
      )
      .run(toRow(record));
  }

  delete(id: string): void {
    this.db.prepare('DELETE FROM model_downloads WHERE id = ?').run(id);
  }
}

function fromRow({ files_json, created_at, updated_at, ...fields }: Row): DownloadRecord {
  return { ...fields, files: JSON.parse(files_json) as string[], createdAt: created_at, updatedAt: updated_at };
}

function toRow({ files, createdAt, updatedAt, ...fields }: DownloadRecord): Row {
  return { ...fields, files_json: JSON.stringify(files), created_at: createdAt, updated_at: updatedAt };
}
