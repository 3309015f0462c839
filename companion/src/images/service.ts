/** The image capability as the routes see it: models, the three operations as jobs, the gallery. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ProviderSettings } from '#shared/api/config.js';
import type { ImageJob, ImageModelRecord, ImageResponse } from '#shared/api/images.js';
import type { Db } from '../store/database.js';
import { HearthError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ProviderClient } from '../providers/client.js';
import { ImageJobManager, type SubmitOptions } from './jobs/job-manager.js';
import { ImageJobStore, type JobViewer } from './jobs/job-store.js';
import { LoadedImageEngines, type LanguageModelMemory } from './loaded-engines.js';
import { imageModelRecord, scanImageModels, type ImageModel } from './registry.js';
import { planEdit, planGeneration, planUpscale, type EditInput, type GenerationInput, type UpscaleInput } from './requests.js';

export interface ImageServiceOptions {
  db: Db;
  /** <data>/images: results, one folder per job. */
  imagesDir: string;
  /** Folders scanned for model folders, in order. */
  folders(): string[];
  providers(): ProviderSettings[];
  providerClient(): ProviderClient;
  memory: LanguageModelMemory;
  threads(): number | 'auto';
  log: Logger;
}

const FRESH_MS = 5000;

export class ImageService {
  private readonly engines: LoadedImageEngines;
  private readonly jobs: ImageJobManager;
  private readonly store: ImageJobStore;
  private scanned: { at: number; models: ImageModel[] } | undefined;

  constructor(private readonly options: ImageServiceOptions) {
    this.engines = new LoadedImageEngines(options.memory, options.threads, options.log);
    this.store = new ImageJobStore(options.db);
    this.jobs = new ImageJobManager({
      store: this.store,
      imagesDir: options.imagesDir,
      engines: this.engines,
      providerClient: options.providerClient,
      log: options.log,
    });
  }

  /** Rescans at most every few seconds; `force` after a configuration change. */
  private scan(force = false): ImageModel[] {
    if (!force && this.scanned && Date.now() - this.scanned.at < FRESH_MS) return this.scanned.models;
    const models = scanImageModels(this.options.folders(), this.options.providers());
    this.scanned = { at: Date.now(), models };
    return models;
  }

  invalidate(): void {
    this.scanned = undefined;
  }

  models(): ImageModelRecord[] {
    return this.scan().map((model) => imageModelRecord(model, this.engines.isLoaded(model.id)));
  }

  /** The model and its record; an unknown id is 404 model_not_found. */
  find(id: string): { model: ImageModel; record: ImageModelRecord } {
    const lookup = (models: ImageModel[]) => models.find((model) => model.id === id);
    const model = lookup(this.scan()) ?? lookup(this.scan(true));
    if (!model) {
      throw new HearthError(
        'model_not_found',
        `The image model "${id}" does not exist. List image models with GET /v1/images/models; a model folder goes into the models folder.`,
        { param: 'model' },
      );
    }
    return { model, record: imageModelRecord(model, this.engines.isLoaded(model.id)) };
  }

  generate(input: GenerationInput, options: SubmitOptions): { id: string; done: Promise<ImageResponse> } {
    const { model, record } = this.find(input.model);
    return this.jobs.submit(planGeneration(model, record, input), options);
  }

  async edit(input: EditInput, options: SubmitOptions): Promise<{ id: string; done: Promise<ImageResponse> }> {
    const { model, record } = this.find(input.model);
    return this.jobs.submit(await planEdit(model, record, input), options);
  }

  async upscale(input: UpscaleInput, options: SubmitOptions): Promise<{ id: string; done: Promise<ImageResponse> }> {
    const { model, record } = this.find(input.model);
    return this.jobs.submit(await planUpscale(model, record, input), options);
  }

  /** One job, when `viewer` may see it (another key's job is job_not_found, like an unknown id). */
  job(id: string, viewer: JobViewer): ImageJob {
    return this.jobs.get(id, viewer);
  }

  gallery(limit: number, status: ImageJob['status'] | undefined, viewer: JobViewer): ImageJob[] {
    return this.store.list(limit, status, viewer);
  }

  cancel(id: string, viewer: JobViewer): ImageJob {
    return this.jobs.cancel(id, viewer);
  }

  remove(id: string, viewer: JobViewer): void {
    this.jobs.remove(id, viewer);
  }

  /** Path of a stored result of a job `viewer` may see; anything else (a bad name, a removed job) is job_not_found. */
  resultFile(jobId: string, name: string, viewer: JobViewer): string {
    const missing = () => new HearthError('job_not_found', 'No stored image has this address.');
    if (!/^job_[A-Za-z0-9_-]{16}$/.test(jobId) || !/^\d{1,3}\.png$/.test(name)) throw missing();
    if (!this.store.get(jobId, viewer)) throw missing();
    const path = join(this.options.imagesDir, jobId, name);
    if (!existsSync(path)) throw missing();
    return path;
  }

  async close(): Promise<void> {
    await this.jobs.close();
    await this.engines.close();
  }
}
