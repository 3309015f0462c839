/**
 * Hosted (paid) media: quote, then a confirmed job, then the artifact copied into the data
 * folder. Nothing reaches a provider without an unexpired, unused quote, `confirm: true`,
 * `images.hosted.enabled` and room in `images.hosted.monthly_budget_usd`. Jobs are persisted
 * and followed again after a restart; a job is never sent twice.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import type { ConfigDocument, MediaProviderSettings } from '#shared/api/config.js';
import type { MediaBudget, MediaJob, MediaJobRequest, MediaProviderList, MediaQuote, MediaQuoteRequest } from '#shared/api/media.js';
import { HearthError } from '../errors.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { RemoteProviders, type ResolveSecret } from '../providers/remote.js';
import type { Db } from '../store/database.js';
import { MediaStore, toMediaJob, type JobRow } from './media-store.js';
import { OpenAiVideos, type RemoteVideo } from './openai-videos.js';
import { buildQuote, quoteRecord } from './quotes.js';
import { track } from './tracker.js';

export interface MediaServiceOptions {
  db: Db;
  mediaDir: string;
  config(): ConfigDocument;
  resolveSecret: ResolveSecret;
  log: Logger;
}

/** How often a submission whose outcome was lost is looked for at the provider before giving up. */
const RECONCILE_ATTEMPTS = 10;

export class MediaService {
  private readonly store: MediaStore;
  private providerClients: RemoteProviders | undefined;
  private readonly trackers = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();

  constructor(private readonly options: MediaServiceOptions) {
    this.store = new MediaStore(options.db);
    mkdirSync(options.mediaDir, { recursive: true, mode: 0o700 });
  }

  private providersOf(config: ConfigDocument): RemoteProviders {
    return new RemoteProviders(
      config.media_providers.map(({ name, base_url, api_key, headers, timeout_ms }) => ({ name, base_url, api_key, headers, timeout_ms })),
      this.options.resolveSecret,
    );
  }

  configure(next: ConfigDocument): void {
    this.providerClients = this.providersOf(next);
  }

  private get remote(): RemoteProviders {
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

  quote(request: MediaQuoteRequest): MediaQuote {
    this.assertEnabled();
    const provider = this.provider(request.provider);
    const row = buildQuote(provider, request, this.options.mediaDir, Date.now());
    this.store.addQuote(row);
    return quoteRecord(row, provider, this.budget());
  }

  /** Dispatches exactly what was quoted, once. */
  async confirm(request: MediaJobRequest): Promise<MediaJob> {
    if (request.confirm !== true)
      throw new HearthError('invalid_request_error', 'Set confirm: true once the quote was shown and accepted.', { param: 'confirm' });
    this.assertEnabled();
    const quote = this.store.quote(request.quote_id);
    if (!quote || quote.used_at !== null) throw new HearthError('quote_not_found', `No unused quote has the id "${request.quote_id}".`, { param: 'quote_id' });
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

  job(id: string): MediaJob {
    return toMediaJob(this.row(id));
  }

  jobs(limit: number): MediaJob[] {
    return this.store.jobs(limit).map(toMediaJob);
  }

  contentPath(id: string): string {
    const row = this.row(id);
    if (row.status !== 'completed' || !row.artifact || !existsSync(row.artifact)) {
      throw new HearthError('media_content_unavailable', `The job ${id} is ${row.status}; its video is not here yet.`);
    }
    return row.artifact;
  }

  /** Follows every unfinished job again (after a restart). */
  start(): void {
    for (const row of this.store.unfinished()) {
      if (row.remote_id) this.follow(row.id, row.provider);
      else if (row.submitted_at !== null) void this.reconcile(row);
      else void this.submit(row);
    }
  }

  async close(): Promise<void> {
    this.stopping.abort(new Error('server shutting down'));
    await Promise.allSettled([...this.trackers.values()]);
  }

  private row(id: string): JobRow {
    const row = this.store.job(id);
    if (!row) throw new HearthError('job_not_found', `No media job has the id "${id}".`, { param: 'id' });
    return row;
  }

  private videos(provider: string): OpenAiVideos {
    return new OpenAiVideos(this.remote, provider);
  }

  private async submit(row: JobRow): Promise<void> {
    const quote = this.store.quote(row.quote_id)!;
    const reference = quote.input_image
      ? { bytes: readFileSync(quote.input_image), type: `image/${quote.input_image.endsWith('.jpg') ? 'jpeg' : quote.input_image.split('.').pop()}` }
      : undefined;
    this.store.update(row.id, { submitted_at: Date.now() });
    let video: RemoteVideo;
    try {
      video = await this.videos(row.provider).create(
        { model: row.model, prompt: row.prompt, seconds: row.seconds, size: row.size, inputReference: reference },
        this.stopping.signal,
      );
    } catch (error) {
      if (error instanceof HearthError && error.code === 'provider_error') {
        // The provider answered and refused: nothing was made, nothing is charged.
        this.store.update(row.id, {
          status: 'failed',
          submitted_at: null,
          completed_at: Date.now(),
          error_json: JSON.stringify({ code: 'provider_refused', message: error.message }),
        });
        return;
      }
      // No answer: it may or may not have arrived. Look it up instead of sending it again.
      this.options.log.warn({ job: row.id, err: error }, 'hosted media submission outcome unknown; looking it up');
      void this.reconcile(this.store.job(row.id)!);
      return;
    }
    this.store.update(row.id, {
      remote_id: video.id,
      status: video.status === 'completed' ? 'downloading' : video.status === 'failed' ? 'failed' : video.status,
      progress: video.progress ?? 0,
    });
    this.follow(row.id, row.provider);
  }

  /** Finds a submission whose answer was lost among the provider's recent jobs, or gives it up unsent. */
  private async reconcile(row: JobRow): Promise<void> {
    for (let attempt = 0; attempt < RECONCILE_ATTEMPTS && !this.stopping.signal.aborted; attempt++) {
      try {
        const since = Math.floor((row.submitted_at ?? row.created_at) / 1000) - 120;
        const match = (await this.videos(row.provider).list(50, this.stopping.signal)).find(
          (video) =>
            video.prompt === row.prompt &&
            video.model === row.model &&
            video.size === row.size &&
            String(video.seconds) === String(row.seconds) &&
            (video.created_at ?? 0) >= since,
        );
        if (match) {
          this.store.update(row.id, {
            remote_id: match.id,
            status: match.status === 'completed' ? 'downloading' : match.status === 'failed' ? 'failed' : match.status,
          });
          this.follow(row.id, row.provider);
        } else {
          this.store.update(row.id, {
            status: 'failed',
            submitted_at: null,
            completed_at: Date.now(),
            error_json: JSON.stringify({
              code: 'not_submitted',
              message: 'The provider has no record of this job, so it was not made or charged. It was not sent again; confirm a new quote to try again.',
            }),
          });
        }
        return;
      } catch (error) {
        this.options.log.warn({ job: row.id, err: error }, 'hosted media jobs could not be listed; retrying');
        await new Promise((resolve) => setTimeout(resolve, this.interval(row.provider)).unref());
      }
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
