/**
 * Image jobs: each request becomes a persisted job that goes queued -> preparing -> generating
 * -> completed | failed | cancelled. Local engines run one job at a time, in order, so a job
 * queued behind a cancelled one starts only once the cancelled one has actually stopped (its
 * engine confirmed, between two steps). Provider jobs run at once, beside the local ones.
 */
import { rmSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ErrorBody } from '#shared/api/errors.js';
import type { ImageData, ImageJob, ImageJobResult, ImageResponse, ImageStreamEvent } from '#shared/api/images.js';
import { HearthError } from '../../errors.js';
import { newId } from '../../ids.js';
import type { Logger } from '../../logger.js';
import type { ProviderClient } from '../../providers/client.js';
import type { LoadedImageEngines } from '../loaded-engines.js';
import { planSummary, type JobPlan } from '../requests.js';
import { EVERY_JOB, isTerminal, type ImageJobStore, type JobViewer } from './job-store.js';
import { runPlan, type RunOutput } from './runner.js';

export interface SubmitOptions {
  /** Aborted when the client goes away: the job is cancelled. */
  signal?: AbortSignal;
  onEvent?(event: ImageStreamEvent): void;
  previews?: boolean;
  responseFormat?: 'b64_json' | 'url';
  /** Origin the `url` answers are built on, e.g. http://127.0.0.1:4777. */
  origin?: string;
  /** The access key asking (recorded on the job: only it, and callers without a key, see the job). */
  owner?: string | null;
}

interface Active {
  id: string;
  plan: JobPlan;
  controller: AbortController;
  /** Why it is stopping: a cancel request, the client leaving, or shutdown. */
  reason?: 'cancel' | 'client' | 'shutdown';
  started: boolean;
  options: SubmitOptions;
  emit(event: ImageStreamEvent): void;
  settle(outcome: { response: ImageResponse } | { error: HearthError }): void;
}

export interface JobManagerOptions {
  store: ImageJobStore;
  imagesDir: string;
  engines: LoadedImageEngines;
  providerClient: () => ProviderClient;
  log: Logger;
}

const errorOf = (error: HearthError): ErrorBody['error'] => error.toBody().error;

export class ImageJobManager {
  private readonly active = new Map<string, Active>();
  private readonly queue: Active[] = [];
  private running: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: JobManagerOptions) {
    const interrupted = options.store.failInterrupted(errorOf(new HearthError('job_interrupted')));
    if (interrupted > 0) options.log.warn({ jobs: interrupted }, 'image jobs left unfinished by the last run are marked failed');
  }

  /** Creates the job and resolves with its answer once it completed; rejects when it failed or was cancelled. */
  submit(plan: JobPlan, options: SubmitOptions = {}): { id: string; done: Promise<ImageResponse> } {
    if (this.closed) throw new HearthError('server_busy', 'The server is shutting down.', { retryAfter: 5 });
    const id = newId('job_');
    const summary = planSummary(plan);
    this.options.store.create({
      id,
      operation: summary.operation,
      model: plan.model.id,
      steps: summary.steps,
      prompt: summary.prompt,
      negativePrompt: summary.negativePrompt,
      size: summary.size,
      seed: summary.seed,
      owner: options.owner ?? null,
    });
    let settle!: Active['settle'];
    const done = new Promise<ImageResponse>((resolve, reject) => {
      settle = (outcome) => ('response' in outcome ? resolve(outcome.response) : reject(outcome.error));
    });
    const active: Active = {
      id,
      plan,
      controller: new AbortController(),
      started: false,
      options,
      emit: (event) => options.onEvent?.(event),
      settle,
    };
    this.active.set(id, active);
    options.signal?.addEventListener('abort', () => this.stop(active, 'client'), { once: true });
    active.emit({ type: 'image.stage', job_id: id, stage: 'queued' });
    if (plan.kind === 'provider') void this.execute(active);
    else {
      this.queue.push(active);
      this.pump();
    }
    if (options.signal?.aborted) this.stop(active, 'client');
    return { id, done };
  }

  /** The job as `viewer` sees it; another key's job is not found, like an unknown id. */
  get(id: string, viewer: JobViewer = EVERY_JOB): ImageJob {
    const job = this.options.store.get(id, viewer);
    if (!job) throw new HearthError('job_not_found', `No image job has the id "${id}".`, { param: 'job_id' });
    return job;
  }

  /** Asks a job to stop: a queued one is cancelled at once, a running one at its next step. */
  cancel(id: string, viewer: JobViewer): ImageJob {
    const job = this.get(id, viewer);
    const active = this.active.get(id);
    if (!active || isTerminal(job.status)) return job;
    this.options.store.requestCancel(id);
    this.stop(active, 'cancel');
    return this.get(id);
  }

  remove(id: string, viewer: JobViewer): void {
    const job = this.get(id, viewer);
    if (!isTerminal(job.status)) throw new HearthError('invalid_request_error', `The job ${id} is still ${job.status}; cancel it first.`, { param: 'id' });
    this.options.store.delete(id);
    rmSync(join(this.options.imagesDir, id), { recursive: true, force: true });
  }

  /** Stops every job and waits for the running one to confirm. */
  async close(): Promise<void> {
    this.closed = true;
    for (const active of [...this.active.values()]) this.stop(active, 'shutdown');
    await this.running;
  }

  private stop(active: Active, reason: NonNullable<Active['reason']>): void {
    if (active.controller.signal.aborted) return;
    active.reason = reason;
    active.controller.abort(new Error(`job ${reason}`));
    const waiting = this.queue.indexOf(active);
    if (waiting >= 0) {
      // Never started: nothing to confirm.
      this.queue.splice(waiting, 1);
      this.finishStopped(active);
    }
  }

  /** Runs queued local jobs one after another. */
  private pump(): void {
    if (this.running) return;
    this.running = (async () => {
      for (let next = this.queue.shift(); next; next = this.queue.shift()) {
        await this.execute(next);
        // The next job for the same model keeps the engine; otherwise it is freed with its memory share.
        if (!this.queue.some((queued) => queued.plan.model.id === next!.plan.model.id)) await this.options.engines.release().catch(() => undefined);
      }
    })().finally(() => {
      this.running = undefined;
      if (this.queue.length > 0) this.pump();
    });
  }

  private async execute(active: Active): Promise<void> {
    const { store } = this.options;
    const { id, plan, options } = active;
    if (active.controller.signal.aborted) return;
    active.started = true;
    store.stage(id, 'preparing');
    active.emit({ type: 'image.stage', job_id: id, stage: 'preparing' });
    try {
      const outputs = await runPlan(plan, {
        signal: active.controller.signal,
        engines: this.options.engines,
        providers: this.options.providerClient(),
        stage: () => {
          store.stage(id, 'generating');
          active.emit({ type: 'image.stage', job_id: id, stage: 'generating' });
        },
        notice: (text) => {
          store.note(id, text);
          active.emit({ type: 'image.stage', job_id: id, stage: 'preparing', message: text });
        },
        progress: (step, steps) => {
          store.progress(id, step, steps);
          active.emit({ type: 'image.progress', job_id: id, step, steps });
        },
        preview: options.previews
          ? (step, png, width, height) => active.emit({ type: 'image.preview', job_id: id, step, b64_json: png.toString('base64'), width, height })
          : undefined,
      });
      active.controller.signal.throwIfAborted();
      const { response, results } = await this.saveResults(id, outputs, options);
      if (active.controller.signal.aborted) {
        // Cancelled while its files were being written: nothing is kept.
        await rm(join(this.options.imagesDir, id), { recursive: true, force: true });
        return this.finishStopped(active);
      }
      this.options.store.complete(id, results);
      this.active.delete(id);
      active.emit({ type: 'image.completed', ...response });
      active.settle({ response });
    } catch (error) {
      if (active.controller.signal.aborted) return this.finishStopped(active);
      const hearth = error instanceof HearthError ? error : new HearthError('internal_error', undefined, { cause: error });
      if (hearth.code === 'internal_error') this.options.log.error({ err: error, job: id }, 'image job failed');
      const shown =
        hearth.code === 'internal_error' ? new HearthError('internal_error', `The image job failed: ${(error as Error)?.message ?? String(error)}`) : hearth;
      store.finish(id, 'failed', errorOf(shown));
      this.active.delete(id);
      active.emit({ type: 'image.failed', job_id: id, error: errorOf(shown) });
      active.settle({ error: shown });
    }
  }

  private finishStopped(active: Active): void {
    const { store } = this.options;
    const why = {
      cancel: 'The job was cancelled.',
      client: 'The client disconnected, so the job was cancelled.',
      shutdown: 'The server shut down, so the job was cancelled.',
    }[active.reason ?? 'cancel'];
    store.finish(active.id, 'cancelled', null);
    store.note(active.id, why);
    this.active.delete(active.id);
    const job = store.get(active.id)!;
    active.emit({ type: 'image.cancelled', job_id: active.id, step: job.step, steps: job.steps });
    active.settle({ error: new HearthError('job_cancelled', why) });
  }

  /** Results go under <data>/images/<job>/; a preview never does. Written whole, then renamed, off the event loop. */
  private async saveResults(id: string, outputs: RunOutput[], options: SubmitOptions): Promise<{ response: ImageResponse; results: ImageJobResult[] }> {
    const folder = join(this.options.imagesDir, id);
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const results: ImageJobResult[] = [];
    for (const [index, output] of outputs.entries()) {
      const file = join(folder, `${index}.png`);
      await writeFile(`${file}.tmp`, output.png);
      await rename(`${file}.tmp`, file);
      results.push({ url: `/v1/images/files/${id}/${index}.png`, width: output.width, height: output.height, seed: output.seed });
    }
    const data: ImageData[] = outputs.map((output, index) =>
      options.responseFormat === 'url'
        ? { url: `${options.origin ?? ''}${results[index]!.url}`, seed: output.seed, width: output.width, height: output.height }
        : { b64_json: output.png.toString('base64'), seed: output.seed, width: output.width, height: output.height },
    );
    return { response: { created: Math.floor(Date.now() / 1000), data, job_id: id }, results };
  }
}
