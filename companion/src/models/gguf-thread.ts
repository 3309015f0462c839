/**
 * The companion's side of the GGUF header thread (gguf-worker.ts). Headers are read there, one
 * file at a time, so a hostile or damaged file can neither hold up the event loop nor end the
 * process: when the thread fails, runs out of memory or passes the deadline while reading a
 * file, that one read fails with a plain reason, and the next read starts a fresh thread.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { GgufMetadata } from './gguf-header.js';

export interface GgufThreadOptions {
  /** The thread's module (default: gguf-worker beside this file); tests put a stand-in here. */
  entry?: URL;
  /** How long one file may take, from the request to the answer. Default 60 s. */
  deadlineMs?: number;
  /** The thread's JavaScript heap. Default 256 MiB. */
  heapMb?: number;
  /** An idle thread ends after this long. Default 15 s. */
  idleMs?: number;
}

// Run through tsx, the thread's module is TypeScript and needs tsx's loader, which a worker does
// not inherit: the image engine thread's start module registers it (the build copies that module
// beside the bundle, where this file's module lies too).
const FROM_SOURCE = extname(fileURLToPath(import.meta.url)) === '.ts';
const ENTRY = new URL(`./gguf-worker${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url);
const START = new URL(FROM_SOURCE ? '../images/thread/start.mjs' : './start.mjs', import.meta.url);

/** What the companion asks the thread (a structured-cloned message). */
export interface GgufRequest {
  id: number;
  path: string;
}

/** What the thread answers: the metadata, or why there is none. */
export type GgufReply = { id: number; metadata: GgufMetadata } | { id: number; error: string };

interface Job {
  id: number;
  path: string;
  resolve(metadata: GgufMetadata): void;
  reject(error: Error): void;
}

export class GgufThread {
  private worker: Worker | undefined;
  private readonly queue: Job[] = [];
  private current: Job | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private idle: NodeJS.Timeout | undefined;
  private nextId = 1;

  constructor(private readonly options: GgufThreadOptions = {}) {}

  /** The metadata of the GGUF at `path`; rejects with an Error whose message says why in plain words. */
  read(path: string): Promise<GgufMetadata> {
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, path, resolve, reject });
      this.pump();
    });
  }

  /** Ends the thread; reads still waiting fail. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    for (const job of this.queue.splice(0)) job.reject(new Error('the header reader was closed'));
    this.finish(new Error('the header reader was closed'));
    await worker?.terminate();
  }

  private pump(): void {
    if (this.current || this.queue.length === 0) return;
    clearTimeout(this.idle);
    const job = this.queue.shift()!;
    this.current = job;
    const worker = this.worker ?? this.start();
    // A read in progress keeps the process alive (a `hearth pull` waits for it); an idle thread does not.
    worker.ref();
    const deadlineMs = this.options.deadlineMs ?? 60_000;
    this.deadline = setTimeout(() => this.fail(worker, `reading its header took longer than ${deadlineMs / 1000} s`), deadlineMs);
    worker.postMessage({ id: job.id, path: job.path });
  }

  private start(): Worker {
    const entry = this.options.entry ?? ENTRY;
    const heapMb = this.options.heapMb ?? 256;
    const worker = new Worker(START, {
      workerData: { entry: entry.href },
      // Past this the thread ends with ERR_WORKER_OUT_OF_MEMORY; without a limit, V8 would end the process.
      resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: Math.min(32, heapMb / 4) },
    });
    this.worker = worker;
    worker.on('message', (reply: GgufReply) => {
      if (this.worker !== worker || reply.id !== this.current?.id) return;
      if ('error' in reply) this.finish(new Error(reply.error));
      else this.finish(undefined, reply.metadata);
    });
    worker.on('error', (error: Error & { code?: string }) => {
      const reason =
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `reading its header needed more than the ${heapMb} MiB of memory allowed`
          : `the header reader failed on it (${error.message})`;
      this.fail(worker, reason);
    });
    worker.on('exit', (code) => this.fail(worker, `the header reader stopped while reading it (exit code ${code})`));
    return worker;
  }

  /** The thread went wrong while reading the current file: that read fails and the thread goes. */
  private fail(worker: Worker, reason: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    void worker.terminate();
    this.finish(new Error(reason));
  }

  private finish(error: Error | undefined, metadata?: GgufMetadata): void {
    clearTimeout(this.deadline);
    const job = this.current;
    this.current = undefined;
    if (job && error) job.reject(error);
    else if (job) job.resolve(metadata!);
    if (this.queue.length > 0) return this.pump();
    const worker = this.worker;
    if (!worker) return;
    worker.unref();
    this.idle = setTimeout(() => {
      if (this.worker !== worker || this.current) return;
      this.worker = undefined;
      void worker.terminate();
    }, this.options.idleMs ?? 15_000);
    this.idle.unref();
  }
}
