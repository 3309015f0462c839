/**
 * The model library: Hugging Face search through the companion, a repository's GGUF files with
 * whether they fit this machine, and downloads (progress, speed, pause, resume, cancel) that the
 * companion keeps across reloads and restarts.
 */
import { ApiError } from '$lib/api/client';
import { cancelDownload, listDownloads, pauseDownload, removeModel, repoFiles, resumeDownload, searchHub, startDownload, type HubSort } from '$lib/api/library';
import type { HubFile, HubModel, ModelDownload } from '#shared/api/model-library.js';
import { models } from './models.svelte';
import { session } from './session.svelte';
import { adminProblem } from './problems';

/** In words; a refused admin session is forgotten and explained. */
const describe = (error: unknown) => adminProblem(error, 'search and download models');
const OFFLINE = 'This device is offline. Searching and downloading need internet; the models on this machine keep working.';
const offline = () => typeof navigator !== 'undefined' && navigator.onLine === false;
const running = (download: ModelDownload) => download.status === 'queued' || download.status === 'downloading';

export class LibraryStore {
  query = $state('');
  sort = $state<HubSort>('downloads');
  results = $state<HubModel[]>([]);
  searched = $state(false);
  searching = $state(false);
  searchError = $state<string | null>(null);
  /** The repository whose files are shown. */
  repo = $state<string | null>(null);
  files = $state<HubFile[]>([]);
  filesLoading = $state(false);
  filesError = $state<string | null>(null);
  budgetBytes = $state<number | null>(null);
  /** Newest first. */
  downloads = $state<ModelDownload[]>([]);
  actionError = $state<string | null>(null);
  #search: AbortController | null = null;

  /** Queued, running, paused or failed: what the downloads list shows with controls. */
  unfinished = $derived(this.downloads.filter((download) => download.status !== 'completed' && download.status !== 'cancelled'));

  constructor(private readonly onModelsChanged: () => void = () => undefined) {}

  /** The download of a given source still under way or paused, if any. */
  downloadOf(source: string): ModelDownload | undefined {
    return this.downloads.find((download) => download.source === source && download.status !== 'cancelled');
  }

  async search(): Promise<void> {
    this.#search?.abort();
    if (offline()) {
      this.searchError = OFFLINE;
      this.results = [];
      return;
    }
    const controller = new AbortController();
    this.#search = controller;
    this.searching = true;
    this.searchError = null;
    try {
      this.results = await searchHub(this.query, this.sort, 20, controller.signal);
      this.searched = true;
    } catch (error) {
      if (controller.signal.aborted) return;
      this.results = [];
      this.searchError = error instanceof ApiError && error.code === 'unreachable' ? `The companion could not be asked: ${error.message}` : describe(error);
    } finally {
      if (this.#search === controller) this.searching = false;
    }
  }

  async open(repo: string): Promise<void> {
    this.repo = repo;
    this.files = [];
    this.filesError = offline() ? OFFLINE : null;
    if (this.filesError) return;
    this.filesLoading = true;
    try {
      const answer = await repoFiles(repo);
      if (this.repo !== repo) return;
      this.files = answer.data;
      this.budgetBytes = answer.memory_budget_bytes;
    } catch (error) {
      if (this.repo === repo) this.filesError = describe(error);
    } finally {
      if (this.repo === repo) this.filesLoading = false;
    }
  }

  close(): void {
    this.repo = null;
    this.files = [];
    this.filesError = null;
  }

  async refreshDownloads(): Promise<void> {
    if (!session.signedIn) return;
    try {
      this.setDownloads(await listDownloads());
    } catch (error) {
      this.actionError = describe(error);
    }
  }

  setDownloads(list: ModelDownload[]): void {
    this.downloads = [...list].sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
  }

  /** A change reported by the companion (or the answer to an action). */
  update(download: ModelDownload): void {
    const index = this.downloads.findIndex((candidate) => candidate.id === download.id);
    const before = index >= 0 ? this.downloads[index] : undefined;
    // An answer to an action can arrive after a newer change from the status stream.
    if (before && before.updated_at > download.updated_at) return;
    if (index >= 0) this.downloads[index] = download;
    else this.setDownloads([...this.downloads, download]);
    if (download.status === 'completed' && before?.status !== 'completed') this.onModelsChanged();
  }

  async download(source: string): Promise<void> {
    await this.#act(() => startDownload(source));
  }

  async pause(id: string): Promise<void> {
    await this.#act(() => pauseDownload(id));
  }

  async resume(id: string): Promise<void> {
    await this.#act(() => resumeDownload(id));
  }

  /** Cancels a download under way, or removes a finished one from the list. */
  async cancel(id: string): Promise<void> {
    const download = this.downloads.find((candidate) => candidate.id === id);
    const forget = download && !running(download) && (download.status === 'completed' || download.status === 'cancelled');
    await this.#act(async () => {
      const answer = await cancelDownload(id);
      if (forget) this.downloads = this.downloads.filter((candidate) => candidate.id !== id);
      return forget ? null : answer;
    });
  }

  /** Deletes a model from the companion's own models folder. */
  async removeModel(id: string): Promise<boolean> {
    this.actionError = null;
    try {
      await removeModel(id);
      this.onModelsChanged();
      return true;
    } catch (error) {
      this.actionError = `${id} could not be removed: ${describe(error)}`;
      return false;
    }
  }

  async #act(action: () => Promise<ModelDownload | null>): Promise<void> {
    this.actionError = null;
    try {
      const download = await action();
      if (download) this.update(download);
    } catch (error) {
      this.actionError = describe(error);
    }
  }
}

export const library = new LibraryStore(() => void models.refreshCompanion());
