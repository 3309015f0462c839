import {
  cancelImageJob,
  confirmQuote,
  deleteImageJob,
  editImage,
  fetchFile,
  generateImages,
  listImageJobs,
  listImageModels,
  listMediaJobs,
  mediaProviders,
  requestQuote,
  upscaleImage,
} from '$lib/api/images';
import type { ImageJob, ImageModelRecord, ImageStreamEvent } from '#shared/api/images.js';
import type { MediaJob, MediaProviderList, MediaQuote, MediaQuoteRequest } from '#shared/api/media.js';
import { describe } from './problems';

export type ImageMode = 'generate' | 'edit' | 'upscale' | 'video';

/** The job this page started and is following. */
export interface RunningJob {
  id: string | null;
  mode: Exclude<ImageMode, 'video'>;
  stage: 'queued' | 'preparing' | 'generating';
  step: number;
  steps: number;
  /** The latest preview (a data URL), shown while generating; never the result. */
  preview: string | null;
  notes: string[];
  cancelling: boolean;
}

export interface ImageResult {
  src: string;
  width: number;
  height: number;
  seed: number | null;
}

const needs: Record<Exclude<ImageMode, 'video'>, keyof ImageModelRecord['capabilities']> = { generate: 'generate', edit: 'edit', upscale: 'upscale' };

export class ImagesStore {
  models = $state<ImageModelRecord[]>([]);
  modelsError = $state<string | null>(null);
  mode = $state<ImageMode>('generate');
  /** Chosen model per mode. */
  chosen = $state<Record<Exclude<ImageMode, 'video'>, string>>({ generate: '', edit: '', upscale: '' });
  prompt = $state('');
  negativePrompt = $state('');
  size = $state('');
  steps = $state<number | null>(null);
  guidance = $state<number | null>(null);
  seed = $state<number | null>(null);
  strength = $state(0.75);
  scale = $state(2);
  /** Edit: the source picture and the drawn mask (transparent where it repaints). */
  source = $state<File | null>(null);
  mask = $state<Blob | null>(null);
  /** Upscale: the dropped picture. */
  upscaleFile = $state<File | null>(null);

  running = $state<RunningJob | null>(null);
  results = $state<ImageResult[]>([]);
  error = $state<string | null>(null);
  /** The tab the results and error above belong to: another tab does not show them. */
  outputMode = $state<Exclude<ImageMode, 'video'> | null>(null);

  gallery = $state<ImageJob[]>([]);
  galleryError = $state<string | null>(null);
  /** Result URL -> object URL of its bytes (fetched with the access key). */
  thumbnails = $state<Record<string, string>>({});

  media = $state<MediaProviderList | null>(null);
  mediaError = $state<string | null>(null);
  quote = $state<MediaQuote | null>(null);
  quoting = $state(false);
  confirming = $state(false);
  mediaJobs = $state<MediaJob[]>([]);
  /** Media job id -> object URL of its copied video. */
  videos = $state<Record<string, string>>({});

  #controller: AbortController | null = null;

  /** Models that can do the current mode, usable ones first. */
  choices = $derived(this.mode === 'video' ? [] : this.models.filter((model) => model.capabilities[needs[this.mode as Exclude<ImageMode, 'video'>]]));
  model = $derived(this.mode === 'video' ? undefined : this.models.find((model) => model.id === this.chosen[this.mode as Exclude<ImageMode, 'video'>]));

  async refreshModels(): Promise<void> {
    try {
      this.models = await listImageModels();
      this.modelsError = null;
      for (const mode of ['generate', 'edit', 'upscale'] as const) {
        const usable = this.models.filter((model) => model.capabilities[needs[mode]] && !model.error);
        if (!usable.some((model) => model.id === this.chosen[mode])) this.chosen[mode] = usable[0]?.id ?? '';
      }
    } catch (error) {
      this.modelsError = describe(error);
    }
  }

  choose(id: string): void {
    if (this.mode === 'video') return;
    this.chosen[this.mode] = id;
    const model = this.models.find((entry) => entry.id === id);
    this.size = '';
    this.steps = null;
    this.guidance = null;
    if (model?.limits.scales.length && !model.limits.scales.includes(this.scale)) this.scale = model.limits.scales[0]!;
  }

  #start(mode: RunningJob['mode']): AbortSignal {
    this.#controller?.abort();
    this.#controller = new AbortController();
    this.running = { id: null, mode, stage: 'queued', step: 0, steps: 0, preview: null, notes: [], cancelling: false };
    this.results = [];
    this.error = null;
    this.outputMode = mode;
    return this.#controller.signal;
  }

  #onEvent = (event: ImageStreamEvent): void => {
    const running = this.running;
    if (!running) return;
    running.id ??= event.job_id;
    switch (event.type) {
      case 'image.stage':
        running.stage = event.stage;
        if (event.message) running.notes.push(event.message);
        break;
      case 'image.progress':
        running.step = event.step;
        running.steps = event.steps;
        break;
      case 'image.preview':
        running.preview = `data:image/png;base64,${event.b64_json}`;
        break;
      case 'image.completed':
        this.results = event.data.map((item) => ({ src: `data:image/png;base64,${item.b64_json}`, width: item.width, height: item.height, seed: item.seed }));
        break;
      case 'image.failed':
        this.error = event.error.message;
        break;
      case 'image.cancelled':
        this.error = 'Cancelled.';
        break;
    }
  };

  async #run(mode: RunningJob['mode'], work: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const signal = this.#start(mode);
    try {
      await work(signal);
    } catch (error) {
      if (!signal.aborted) this.error = describe(error);
    } finally {
      this.running = null;
      void this.refreshGallery();
    }
  }

  #options() {
    return {
      model: this.chosen.generate,
      prompt: this.prompt,
      negative_prompt: this.negativePrompt || undefined,
      size: this.size || undefined,
      steps: this.steps ?? undefined,
      guidance: this.guidance ?? undefined,
      seed: this.seed ?? undefined,
    };
  }

  generate(): Promise<void> {
    return this.#run('generate', (signal) => generateImages(this.#options(), this.#onEvent, signal));
  }

  edit(): Promise<void> {
    const source = this.source;
    if (!source) {
      this.error = 'Choose a picture to edit first.';
      return Promise.resolve();
    }
    const fields = { ...this.#options(), model: this.chosen.edit, strength: this.model?.capabilities.strength ? this.strength : undefined };
    return this.#run('edit', (signal) => editImage(fields, source, this.mask ?? undefined, this.#onEvent, signal));
  }

  upscale(): Promise<void> {
    const file = this.upscaleFile;
    if (!file) {
      this.error = 'Drop a picture to upscale first.';
      return Promise.resolve();
    }
    return this.#run('upscale', (signal) => upscaleImage(this.chosen.upscale, this.scale, file, this.#onEvent, signal));
  }

  /** Asks the companion to stop the job; it ends at its next step and reports cancelled. */
  async cancel(): Promise<void> {
    const running = this.running;
    if (!running?.id) return;
    running.cancelling = true;
    try {
      await cancelImageJob(running.id);
    } catch (error) {
      this.error = describe(error);
    }
  }

  async refreshGallery(): Promise<void> {
    try {
      this.gallery = await listImageJobs(48);
      this.galleryError = null;
      for (const job of this.gallery) {
        const url = job.results[0]?.url;
        if (url && !this.thumbnails[url]) void this.#thumbnail(url);
      }
    } catch (error) {
      this.galleryError = describe(error);
    }
  }

  async #thumbnail(url: string): Promise<void> {
    try {
      this.thumbnails[url] = URL.createObjectURL(await fetchFile(url));
    } catch {
      // The file went away (deleted elsewhere): the card says so by having no picture.
    }
  }

  async remove(job: ImageJob): Promise<void> {
    try {
      await deleteImageJob(job.id);
      for (const result of job.results) {
        const src = this.thumbnails[result.url];
        if (src) URL.revokeObjectURL(src);
        delete this.thumbnails[result.url];
      }
      this.gallery = this.gallery.filter((entry) => entry.id !== job.id);
    } catch (error) {
      this.galleryError = describe(error);
    }
  }

  async refreshMedia(): Promise<void> {
    try {
      [this.media, this.mediaJobs] = await Promise.all([mediaProviders(), listMediaJobs()]);
      this.mediaError = null;
    } catch (error) {
      this.mediaError = describe(error);
    }
  }

  async askQuote(request: MediaQuoteRequest): Promise<void> {
    this.quoting = true;
    this.quote = null;
    this.mediaError = null;
    try {
      this.quote = await requestQuote(request);
    } catch (error) {
      this.mediaError = describe(error);
    } finally {
      this.quoting = false;
    }
  }

  /** Dispatches the shown quote; the job then runs at the provider whether or not this page stays open. */
  async confirm(): Promise<void> {
    const quote = this.quote;
    if (!quote) return;
    this.confirming = true;
    try {
      const job = await confirmQuote(quote.id);
      this.mediaJobs = [job, ...this.mediaJobs.filter((entry) => entry.id !== job.id)];
      this.quote = null;
      this.mediaError = job.error?.message ?? null;
    } catch (error) {
      this.mediaError = describe(error);
    } finally {
      this.confirming = false;
      void this.refreshMedia();
    }
  }

  dismissQuote(): void {
    this.quote = null;
  }

  /** Whether a media job is still on its way to a copied video. */
  get mediaPending(): boolean {
    return this.mediaJobs.some((job) => job.status !== 'completed' && job.status !== 'failed');
  }

  async loadVideo(job: MediaJob): Promise<void> {
    if (!job.content_url || this.videos[job.id]) return;
    try {
      this.videos[job.id] = URL.createObjectURL(await fetchFile(job.content_url));
    } catch (error) {
      this.mediaError = describe(error);
    }
  }
}

export const images = new ImagesStore();
