/** The rows behind model downloads (SQLite), so a download outlives a page reload and a restart. */
import type { Db } from '../store/database.js';
import type { DownloadStatus, ModelDownload } from '#shared/api/model-library.js';

interface Row {
  id: string;
  source: string;
  status: DownloadStatus;
  bytes_done: number;
  bytes_total: number | null;
  file: string | null;
  files_json: string;
  model_id: string | null;
  error: string | null;
  created_at: number;
  updated_at: number;
}

/** A download as the manager keeps it: the wire record plus every part's file name. */
export interface DownloadRecord extends Omit<ModelDownload, 'bytes_per_second' | 'created_at' | 'updated_at'> {
  files: string[];
  createdAt: number;
  updatedAt: number;
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

function fromRow(row: Row): DownloadRecord {
  return {
    id: row.id,
    source: row.source,
    status: row.status,
    bytes_done: row.bytes_done,
    bytes_total: row.bytes_total,
    file: row.file,
    files: JSON.parse(row.files_json) as string[],
    model_id: row.model_id,
    error: row.error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toRow(record: DownloadRecord): Row {
  return {
    id: record.id,
    source: record.source,
    status: record.status,
    bytes_done: record.bytes_done,
    bytes_total: record.bytes_total,
    file: record.file,
    files_json: JSON.stringify(record.files),
    model_id: record.model_id,
    error: record.error,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
  };
}
