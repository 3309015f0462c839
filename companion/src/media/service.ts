/**
 * Hosted (paid) media: quote, then a confirmed job, then the artifact copied into the data
 * folder. Nothing reaches a provider without an unexpired, unused quote, `confirm: true`,
 * `images.hosted.enabled` and room in `images.hosted.monthly_budget_usd`. Jobs are persisted
 * and followed again after a restart; a job is never sent twice. A job counts as spent unless
 * Hearth knows the provider never made it. Quotes and jobs belong to the access key that asked.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { ConfigDocument, MediaProviderSettings } from '#shared/api/config.js';
import type { MediaJobFailureCode } from '#shared/api/failures.js';
import type { MediaBudget, MediaJob, MediaJobRequest, MediaProviderList, MediaQuote, MediaQuoteRequest } from '#shared/api/media.js';
import { HearthError } from '../errors.js';
import { mediaFailure } from '../failures.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { ProviderClient, type ResolveSecret } from '../providers/client.js';
import type { Db } from '../store/database.js';
import { MediaStore, toMediaJob, type JobRow } from './media-store.js';
import type { JobViewer } from '../images/jobs/job-store.js';
import { OpenAiVideos, type ProviderVideo } from './openai-videos.js';
import { buildQuote, quoteRecord } from './quotes.js';
import { track } from './tracker.js';

export interface MediaServiceOptions {
  db: Db;
  mediaDir: string;
  config(): ConfigDocument;
  resolveSecret: ResolveSecret;
  log: Logger;
}

/** How often a submission whose outcome was lost is looked for at the provider before giving up (list failures included). */
const RECONCILE_ATTEMPTS = 10;
/** Lookups that must all miss before a submission counts as never made. */
const RECONCILE_LOOKUPS = 3;
/** How often stored first frames that are no longer needed are deleted. */
const SWEEP_MS = 60_000;

const sees = (viewer: JobViewer, owner: string | null) => 'all' in viewer || viewer.key === owner;
const jobStatusOf = (video: ProviderVideo): JobRow['status'] =>
  video.status === 'completed' ? 'downloading' : video.status === 'failed' ? 'failed' : video.status;

export class MediaService {
  private readonly store: MediaStore;
  private providerClients: ProviderClient | undefined;
  private readonly trackers = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly options: MediaServiceOptions) {
    this.store = new MediaStore(options.db);
    mkdirSync(options.mediaDir, { recursive: true, mode: 0o700 });
  }

  private providersOf(config: ConfigDocument): ProviderClient {
    return new ProviderClient(
      config.media_providers.map(({ name, base_url, api_key, headers, timeout_ms }) => ({ name, base_url, api_key, headers, timeout_ms })),
      this.options.resolveSecret,
    );
  }

  configure(next: ConfigDocument): void {
    this.providerClients = this.providersOf(next);
  }

  private get client(): ProviderClient {
    return (this.providerClients ??= this.providersOf(this.options.config()));
  }

  private provider(name: string): MediaProviderSettings {
    const provider = this.options.config().media_providers.find((entry) => entry.name === name);
    if (!provider)
      throw new HearthError('media_provider_not_found', `No media provider is named "${name}" (media_providers in config.yaml).`, { param: 'provider' });
    return provider;
  }

  budget(): MediaBudget {
    const hosted = this.options.config().images.hosted;
    const now = new Date();
    const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const spent = Math.round(this.store.spentSince(start) * 10000) / 10000;
    return {
      enabled: hosted.enabled,
      monthly_budget_usd: hosted.monthly_budget_usd,
      spent_usd: spent,
      remaining_usd: Math.max(0, Math.round((hosted.monthly_budget_usd - spent) * 10000) / 10000),
      month: now.toISOString().slice(0, 7),
    };
  }

  providers(): MediaProviderList {
    const data = this.options.config().media_providers.map((provider) => ({
      name: provider.name,
      api: provider.api,
      models: provider.models.map((model) => ({
        id: model.id,
        operations: model.operations,
        seconds: model.seconds,
        sizes: model.sizes,
        usd_per_second: model.usd_per_second,
      })),
    }));
    return { object: 'list', data, budget: this.budget() };
  }

  private assertEnabled(): void {
    if (!this.options.config().images.hosted.enabled) {
      throw new HearthError(
        'hosted_media_disabled',
        'Paid hosted media is off. Set images.hosted.enabled: true (and a monthly_budget_usd) in config.yaml to allow it.',
      );
    }
  }

  async quote(request: MediaQuoteRequest, owner: string | null): Promise<MediaQuote> {
    this.assertEnabled();
    const provider = this.provider(request.provider);
    this.sweepInputs();
    const row = await buildQuote(provider, request, this.options.mediaDir, Date.now(), owner);
    try {
      this.store.addQuote(row);
    } catch (error) {
      if (row.input_image) rmSync(row.input_image, { force: true });
      throw error;
    }
    return quoteRecord(row, provider, this.budget());
  }

  /** Dispatches exactly what was quoted, once; a quote of another key is not found. */
  async confirm(request: MediaJobRequest, viewer: JobViewer): Promise<MediaJob> {
    if (request.confirm !== true)
      throw new HearthError('invalid_request_error', 'Set confirm: true once the quote was shown and accepted.', { param: 'confirm' });
    this.assertEnabled();
    const quote = this.store.quote(request.quote_id);
    if (!quote || quote.used_at !== null || !sees(viewer, quote.owner_key))
      throw new HearthError('quote_not_found', `No unused quote has the id "${request.quote_id}".`, { param: 'quote_id' });
    if (quote.expires_at <= Date.now())
      throw new HearthError('quote_expired', `The quote ${quote.id} expired at ${new Date(quote.expires_at).toISOString()}. Ask for a new one.`, {
        param: 'quote_id',
      });
    this.provider(quote.provider);
    const budget = this.budget();
    if (budget.spent_usd + quote.cost_usd > budget.monthly_budget_usd) {
      throw new HearthError(
        'budget_exceeded',
        `This job costs $${quote.cost_usd}; $${budget.spent_usd} of this month's $${budget.monthly_budget_usd} is spent (images.hosted.monthly_budget_usd).`,
        { param: 'quote_id' },
      );
    }
    const id = newId('job_');
    if (!this.store.createJob(quote, id, Date.now()))
      throw new HearthError('quote_not_found', `The quote ${quote.id} was already used.`, { param: 'quote_id' });
    await this.submit(this.store.job(id)!);
    return toMediaJob(this.store.job(id)!);
  }

  job(id: string, viewer: JobViewer): MediaJob {
    return toMediaJob(this.row(id, viewer));
  }

  jobs(limit: number, viewer: JobViewer): MediaJob[] {
    return this.store.jobs(limit, 'key' in viewer ? viewer.key : null).map(toMediaJob);
  }

  contentPath(id: string, viewer: JobViewer): string {
    const row = this.row(id, viewer);
    if (row.status !== 'completed' || !row.artifact || !existsSync(row.artifact)) {
      throw new HearthError('media_content_unavailable', `The job ${id} is ${row.status}; its video is not here yet.`);
    }
    return row.artifact;
  }

  /** Follows every unfinished job again (after a restart). */
  start(): void {
    this.sweepInputs();
    this.sweeper = setInterval(() => this.sweepInputs(), SWEEP_MS);
    this.sweeper.unref();
    for (const row of this.store.unfinished()) {
      if (row.remote_id) this.follow(row.id, row.provider);
      else if (row.submitted_at !== null) void this.reconcile(row);
      else void this.submit(row);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.stopping.abort(new Error('server shutting down'));
    await Promise.allSettled([...this.trackers.values()]);
  }

  private row(id: string, viewer: JobViewer): JobRow {
    const row = this.store.job(id);
    if (!row || !sees(viewer, row.owner_key)) throw new HearthError('job_not_found', `No media job has the id "${id}".`, { param: 'id' });
    return row;
  }

  private videos(provider: string): OpenAiVideos {
    return new OpenAiVideos(this.client, provider);
  }

  /**
   * Deletes stored first frames no longer needed: a quote's that expired unused, and a used
   * quote's once its job was sent or is known never to have been made.
   */
  private sweepInputs(): void {
    for (const { id, input_image } of this.store.unneededInputs(Date.now())) {
      rmSync(input_image, { force: true });
      this.store.forgetInput(id);
    }
  }

  /** Records a job the provider is known not to have made: it failed, and costs nothing. */
  private notCreated(id: string, code: MediaJobFailureCode, message?: string): void {
    const error_json = JSON.stringify(mediaFailure(code, message));
    this.store.update(id, { status: 'failed', submitted_at: null, not_created: 1, completed_at: Date.now(), error_json });
    this.sweepInputs();
  }

  /** Records the provider's job found for a submission, and follows it. */
  private adopt(row: JobRow, video: ProviderVideo): void {
    this.store.update(row.id, { remote_id: video.id, status: jobStatusOf(video), progress: video.progress ?? 0 });
    this.sweepInputs();
    this.follow(row.id, row.provider);
  }

  private async submit(row: JobRow): Promise<void> {
    const quote = this.store.quote(row.quote_id)!;
    let reference: { bytes: Uint8Array; type: string } | undefined;
    if (quote.input_image) {
      const bytes = await readFile(quote.input_image).catch(() => undefined);
      if (!bytes) return this.notCreated(row.id, 'input_missing');
      reference = { bytes, type: `image/${quote.input_image.endsWith('.jpg') ? 'jpeg' : quote.input_image.split('.').pop()}` };
    }
    this.store.update(row.id, { submitted_at: Date.now() });
    const outcome = await this.videos(row.provider).create(
      { model: row.model, prompt: row.prompt, seconds: row.seconds, size: row.size, inputReference: reference },
      this.stopping.signal,
    );
    if ('created' in outcome) return this.adopt(row, outcome.created);
    // A clear refusal (or a request that never reached the provider): nothing was made, nothing is charged.
    if ('refused' in outcome) return this.notCreated(row.id, 'provider_refused', outcome.refused.message);
    // An answer that proves nothing (a 5xx, a body that is not a video, a lost connection): the
    // job may exist. It is looked up among the provider's jobs instead of being sent again.
    this.options.log.warn({ job: row.id, err: outcome.unknown }, 'hosted media submission outcome unknown; looking it up');
    void this.reconcile(this.store.job(row.id)!);
  }

  /**
   * Finds a submission whose outcome is unknown among the provider's recent jobs, and follows
   * it; after RECONCILE_LOOKUPS lookups without it, it counts as never made. While the provider
   * cannot be asked, the job stays submitting (and counted as spent), and is looked up again at
   * the next start.
   */
  private async reconcile(row: JobRow): Promise<void> {
    let lookups = 0;
    for (let attempt = 0; attempt < RECONCILE_ATTEMPTS && !this.stopping.signal.aborted; attempt++) {
      try {
        const since = Math.floor((row.submitted_at ?? row.created_at) / 1000) - 120;
        const match = (await this.videos(row.provider).list(50, this.stopping.signal)).find(
          (video) =>
            video.prompt === row.prompt &&
            video.model === row.model &&
            video.size === row.size &&
            String(video.seconds) === String(row.seconds) &&
            (video.created_at ?? 0) >= since &&
            !this.store.providerVideoTaken(row.provider, video.id),
        );
        if (match) return this.adopt(row, match);
        if (++lookups >= RECONCILE_LOOKUPS) {
          return this.notCreated(row.id, 'not_submitted');
        }
      } catch (error) {
        this.options.log.warn({ job: row.id, err: error }, 'hosted media jobs could not be listed; retrying');
      }
      await new Promise((resolve) => setTimeout(resolve, this.interval(row.provider)).unref());
    }
  }

  private interval(provider: string): number {
    return (this.options.config().media_providers.find((entry) => entry.name === provider)?.poll_interval_seconds ?? 10) * 1000;
  }

  private follow(id: string, provider: string): void {
    if (this.trackers.has(id)) return;
    const running = track(id, {
      store: this.store,
      mediaDir: this.options.mediaDir,
      videos: this.videos(provider),
      intervalMs: this.interval(provider),
      signal: this.stopping.signal,
      log: this.options.log,
    }).finally(() => this.trackers.delete(id));
    this.trackers.set(id, running);
  }
}
