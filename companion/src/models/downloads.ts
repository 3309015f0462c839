/**
 * Model downloads started from the app: `hearth pull`'s code run in the companion, with a
 * queue, pause (the `.partial` file stays), resume (HTTP Range from where it stopped), cancel
 * (the partial file goes), progress and speed for listeners, and every change kept in SQLite so
 * a download survives a page reload and a restart (one that was running resumes on start).
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { HearthError } from '../errors.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { Db } from '../store/database.js';
import type { ModelDownload } from '#shared/api/model-library.js';
import { DownloadStore, type DownloadRecord } from './download-store.js';
import { pullModel, type PullProgress, type ResolvedFile } from './pull.js';
import { parsePullSpec } from './pull-spec.js';

export interface DownloadManagerOptions {
  db: Db;
  /** Where downloads go: Hearth's own models folder. */
  modelsDir: () => string;
  /** Rescans the models and returns the id /v1/models gives the file at `path`. */
  identify: (path: string) => Promise<string | null>;
  log: Logger;
  fetch?: typeof fetch;
  /** Default: HF_ENDPOINT, else huggingface.co (read when each download starts). */
  endpoint?: string;
  /** Downloads that run at once; the rest wait. Default 2. */
  concurrency?: number;
  now?: () => number;
}

type Listener = (download: ModelDownload) => void;
type StopReason = 'paused' | 'cancelled' | 'shutdown';

class Stop extends Error {
  constructor(readonly reason: StopReason) {
    super(`The download was ${reason === 'shutdown' ? 'interrupted by shutdown' : reason}.`);
    this.name = 'AbortError';
  }
}

interface Active {
  controller: AbortController;
  done: Promise<void>;
  /** Per file: bytes received and the size, once known. */
  files: Map<string, { received: number; total: number | null }>;
  /** (time, bytes) over the last few seconds, for the speed. */
  recent: { at: number; bytes: number }[];
  savedAt: number;
  sentAt: number;
}

const SAVE_EVERY_MS = 1000;
const SEND_EVERY_MS = 200;
const SPEED_WINDOW_MS = 4000;

export class DownloadManager {
  private readonly store: DownloadStore;
  private readonly records = new Map<string, DownloadRecord>();
  private readonly active = new Map<string, Active>();
  private readonly listeners = new Set<Listener>();
  private readonly now: () => number;
  private closed = false;

  constructor(private readonly options: DownloadManagerOptions) {
    this.store = new DownloadStore(options.db);
    this.now = options.now ?? Date.now;
    for (const record of this.store.list()) this.records.set(record.id, record);
  }

  /** Downloads that were queued or running when the companion stopped continue now. */
  start(): void {
    for (const record of this.records.values()) {
      if (record.status === 'downloading') this.change(record, { status: 'queued' });
    }
    this.pump();
  }

  list(): ModelDownload[] {
    return [...this.records.values()].map((record) => this.wire(record));
  }

  get(id: string): ModelDownload {
    return this.wire(this.find(id));
  }

  /** Every change from now on; returns the function that stops them. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Queues a download of anything `hearth pull` accepts; a bad spec is refused at once. */
  create(source: string): ModelDownload {
    const spec = source.trim();
    parsePullSpec(spec);
    if (this.closed) throw new HearthError('server_busy', 'The server is shutting down.', { retryAfter: 5 });
    const now = this.now();
    const record: DownloadRecord = {
      id: newId('dl_'),
      source: spec,
      status: 'queued',
      bytes_done: 0,
      bytes_total: null,
      file: null,
      files: [],
      model_id: null,
      error: null,
      createdAt: now,
      updatedAt: now,
    };
    this.store.insert(record);
    this.records.set(record.id, record);
    this.send(record);
    this.pump();
    return this.wire(record);
  }

  /** Stops a download, keeping its partial file; resolves once it has stopped. */
  async pause(id: string): Promise<ModelDownload> {
    const record = this.find(id);
    if (record.status !== 'queued' && record.status !== 'downloading') throw conflict(record, 'paused');
    const running = this.active.get(id);
    if (running) {
      running.controller.abort(new Stop('paused'));
      await running.done;
    } else this.change(record, { status: 'paused' });
    return this.wire(record);
  }

  /** Continues a paused or failed download from the bytes already on disk. */
  resume(id: string): ModelDownload {
    const record = this.find(id);
    if (record.status !== 'paused' && record.status !== 'failed') throw conflict(record, 'resumed');
    this.change(record, { status: 'queued', error: null });
    this.pump();
    return this.wire(record);
  }

  /** Cancels and deletes the partial files; a finished or cancelled download is forgotten instead. */
  async cancel(id: string): Promise<ModelDownload> {
    const record = this.find(id);
    if (record.status === 'completed' || record.status === 'cancelled') {
      this.records.delete(id);
      this.store.delete(id);
      return this.wire(record);
    }
    const running = this.active.get(id);
    if (running) {
      running.controller.abort(new Stop('cancelled'));
      await running.done;
    } else {
      await this.removePartials(record);
      this.change(record, { status: 'cancelled' });
    }
    return this.wire(record);
  }

  /** Stops running downloads; they stay marked as running and resume at the next start. */
  async close(): Promise<void> {
    this.closed = true;
    const running = [...this.active.values()];
    for (const active of running) active.controller.abort(new Stop('shutdown'));
    await Promise.all(running.map((active) => active.done));
    this.listeners.clear();
  }

  private find(id: string): DownloadRecord {
    const record = this.records.get(id);
    if (!record) throw new HearthError('download_not_found', `No model download has the id "${id}".`, { param: 'id' });
    return record;
  }

  private pump(): void {
    if (this.closed) return;
    const limit = this.options.concurrency ?? 2;
    for (const record of this.records.values()) {
      if (this.active.size >= limit) return;
      if (record.status === 'queued' && !this.active.has(record.id)) this.run(record);
    }
  }

  private run(record: DownloadRecord): void {
    const controller = new AbortController();
    const active: Active = { controller, done: Promise.resolve(), files: new Map(), recent: [], savedAt: 0, sentAt: 0 };
    this.active.set(record.id, active);
    this.change(record, { status: 'downloading', error: null });
    active.done = pullModel({
      spec: record.source,
      modelsDir: this.options.modelsDir(),
      fetch: this.options.fetch,
      endpoint: this.options.endpoint,
      signal: controller.signal,
      onResolved: (files) => this.resolved(record, active, files),
      onProgress: (progress) => this.progress(record, active, progress),
    })
      .then(async (result) => {
        const modelId = await this.options.identify(result.path).catch(() => null);
        this.change(record, { status: 'completed', bytes_done: result.bytes, bytes_total: result.bytes, model_id: modelId });
        this.options.log.info({ download: record.id, model: modelId }, 'model download completed');
      })
      .catch(async (error: unknown) => {
        const stop = controller.signal.reason instanceof Stop ? controller.signal.reason.reason : null;
        if (stop === 'cancelled') await this.removePartials(record);
        if (stop === 'shutdown') return this.store.save(record);
        const failed = error instanceof Error ? error.message : String(error);
        this.change(record, stop ? { status: stop } : { status: 'failed', error: failed });
        if (!stop) this.options.log.warn({ download: record.id, reason: failed }, 'model download failed');
      })
      .finally(() => {
        this.active.delete(record.id);
        this.pump();
      });
  }

  private resolved(record: DownloadRecord, active: Active, files: ResolvedFile[]): void {
    for (const file of files) active.files.set(file.fileName, { received: 0, total: file.size });
    record.files = files.map((file) => file.fileName);
    record.file = record.files[0] ?? null;
    this.totals(record, active);
    this.change(record, {});
  }

  private progress(record: DownloadRecord, active: Active, progress: PullProgress): void {
    active.files.set(progress.file, { received: progress.received, total: progress.total });
    this.totals(record, active);
    const now = this.now();
    active.recent.push({ at: now, bytes: record.bytes_done });
    while (active.recent.length > 2 && now - active.recent[0]!.at > SPEED_WINDOW_MS) active.recent.shift();
    record.updatedAt = now;
    if (now - active.savedAt >= SAVE_EVERY_MS) {
      active.savedAt = now;
      this.store.save(record);
    }
    if (now - active.sentAt >= SEND_EVERY_MS || (record.bytes_total !== null && record.bytes_done >= record.bytes_total)) {
      active.sentAt = now;
      this.send(record);
    }
  }

  private totals(record: DownloadRecord, active: Active): void {
    const parts = [...active.files.values()];
    record.bytes_done = parts.reduce((sum, part) => sum + part.received, 0);
    record.bytes_total = parts.length > 0 && parts.every((part) => part.total !== null) ? parts.reduce((sum, part) => sum + part.total!, 0) : null;
  }

  private async removePartials(record: DownloadRecord): Promise<void> {
    const folder = this.options.modelsDir();
    await Promise.all(record.files.map((file) => rm(path.join(folder, `${path.basename(file)}.partial`), { force: true })));
    record.bytes_done = 0;
  }

  private change(record: DownloadRecord, patch: Partial<DownloadRecord>): void {
    Object.assign(record, patch, { updatedAt: this.now() });
    this.store.save(record);
    this.send(record);
  }

  private send(record: DownloadRecord): void {
    const download = this.wire(record);
    for (const listener of this.listeners) listener(download);
  }

  private wire(record: DownloadRecord): ModelDownload {
    const recent = this.active.get(record.id)?.recent ?? [];
    const first = recent[0];
    const last = recent.at(-1);
    const seconds = first && last ? (last.at - first.at) / 1000 : 0;
    return {
      id: record.id,
      source: record.source,
      status: record.status,
      bytes_done: record.bytes_done,
      bytes_total: record.bytes_total,
      bytes_per_second: record.status === 'downloading' && seconds > 0 ? Math.round((last!.bytes - first!.bytes) / seconds) : null,
      file: record.file,
      model_id: record.model_id,
      error: record.error,
      created_at: new Date(record.createdAt).toISOString(),
      updated_at: new Date(record.updatedAt).toISOString(),
    };
  }
}

function conflict(record: DownloadRecord, wanted: string): HearthError {
  return new HearthError('download_conflict', `The download ${record.id} is ${record.status}; it cannot be ${wanted}.`, { param: 'id' });
}
