/**
 * What the companion's engine is doing, from its status stream: load progress per model (the
 * picker and the chat show "Loading 42%"), samples of tokens/s, queue and memory per loaded model
 * (the Server page's chart), and download changes (the model library). Loopback only: elsewhere
 * the stream is refused and the app simply shows no progress.
 */
import { ApiError } from '$lib/api/client';
import { followStatus } from '$lib/api/status';
import type { ActivitySample, ModelLoadState, StatusEvent } from '#shared/api/admin.js';
import type { ModelDownload } from '#shared/api/model-library.js';
import { library } from './library.svelte';
import { models } from './models.svelte';
import { server } from './server.svelte';
import { session } from './session.svelte';
import { describe } from './problems';

/** Samples kept: five minutes at the companion's 2-second interval. */
const KEEP = 150;
const RETRY_MS = 5000;

export interface ActivityHooks {
  /** A model finished loading or was unloaded, or a download completed: the model list changed. */
  modelsChanged(): void;
  /** The stream broke: the companion may have stopped. */
  lost(): void;
  downloads(list: ModelDownload[]): void;
  download(download: ModelDownload): void;
}

export class ActivityStore {
  /** Whether the stream is open now. */
  live = $state(false);
  /** Why it is not (refused off loopback, companion gone). */
  problem = $state<string | null>(null);
  budgetBytes = $state<number | null>(null);
  samples = $state<ActivitySample[]>([]);
  /** Models loading now, by id. */
  loading = $state<Record<string, ModelLoadState>>({});
  /** The last load that failed, by id (until the next load of that model). */
  failures = $state<Record<string, string>>({});

  latest = $derived(this.samples.at(-1) ?? null);
  memoryUsedBytes = $derived(this.latest?.models.reduce((sum, model) => sum + model.memory_bytes, 0) ?? 0);

  /** The models loaded at the last sample, to notice one loaded or unloaded elsewhere (another client, the idle timer). */
  #loadedIds: string | null = null;

  constructor(private readonly hooks: ActivityHooks) {}

  /** Tells the hooks when the models of a sample differ from the last one's. */
  #compare(sample: ActivitySample): void {
    const ids = idList(sample.models.map((model) => model.id));
    if (this.#loadedIds !== null && ids !== this.#loadedIds) this.hooks.modelsChanged();
    this.#loadedIds = ids;
  }

  /** The load fraction (0..1) of a model loading now, else null. */
  progressOf(id: string): number | null {
    const state = this.loading[id];
    return state?.state === 'loading' ? state.fraction : null;
  }

  handle(event: StatusEvent): void {
    switch (event.type) {
      case 'snapshot':
        this.budgetBytes = event.memory_budget_bytes;
        this.samples = event.samples.slice(-KEEP);
        this.loading = Object.fromEntries(event.loading.map((state) => [state.id, state]));
        this.hooks.downloads(event.downloads);
        // (Re)connected: what is loaded may have changed while the stream was closed.
        this.#loadedIds = null;
        if (event.samples.length > 0) this.#compare(event.samples.at(-1)!);
        this.hooks.modelsChanged();
        break;
      case 'sample':
        this.budgetBytes = event.memory_budget_bytes;
        this.samples = [...this.samples.slice(-(KEEP - 1)), event.sample];
        this.#compare(event.sample);
        break;
      case 'load':
        if (event.load.state === 'loading') {
          this.loading[event.load.id] = event.load;
          delete this.failures[event.load.id];
        } else {
          delete this.loading[event.load.id];
          if (event.load.state === 'failed') this.failures[event.load.id] = event.load.message;
          // The list is read again now, so a sample must compare with the model loaded: unloaded before
          // the next sample, it would otherwise look unchanged and stay shown as loaded.
          if (event.load.state === 'ready' && this.#loadedIds !== null) this.#loadedIds = idList([...this.#loadedIds.split('\n'), event.load.id]);
          this.hooks.modelsChanged();
        }
        break;
      case 'download':
        this.hooks.download(event.download);
        if (event.download.status === 'completed') this.hooks.modelsChanged();
        break;
    }
  }

  /** Follows the stream until the returned function is called; reconnects after a break. */
  watch(): () => void {
    const controller = new AbortController();
    void this.#follow(controller.signal);
    return () => controller.abort();
  }

  async #follow(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await followStatus((event) => {
          this.live = true;
          this.problem = null;
          this.handle(event);
        }, signal);
      } catch (error) {
        if (signal.aborted) break;
        this.live = false;
        this.loading = {};
        this.#loadedIds = null;
        this.hooks.lost();
        // Off loopback the companion never allows it: stop asking.
        if (error instanceof ApiError && error.code === 'permission_denied') {
          this.problem = 'Live server activity is only shown on the machine the companion runs on.';
          return;
        }
        if (error instanceof ApiError && error.code === 'admin_credential_required') {
          this.problem = `Sign in to see live activity. ${session.howToSignIn}`;
          session.markSignedOut();
          return;
        }
        this.problem = describe(error);
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
    this.live = false;
  }
}

export const activity = new ActivityStore({
  modelsChanged: () => {
    void models.refreshCompanion();
    if (server.details) void server.refreshDetails();
  },
  lost: () => void server.check(),
  downloads: (list) => library.setDownloads(list),
  download: (download) => library.update(download),
});

/** A set of model ids as one comparable text. */
function idList(ids: string[]): string {
  return [...new Set(ids.filter(Boolean))].sort().join('\n');
}
