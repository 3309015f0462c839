import { ApiError, clearKeyRefusal } from '$lib/api/client';
import { health, loadModel, probeApi, retryNativeBuild, serverStatus, unloadModel, verifyKey } from '$lib/api/server';
import { ACCESS_KEY_STORAGE, forgetAccessKey, keyFormatProblem, keyPrefix, readAccessKey, storeAccessKey } from '$lib/storage/access-key';
import type { ServerStatus } from '#shared/api/admin.js';
import { session } from './session.svelte';
import { describe } from './problems';
import { listen } from './listen';

/** How the page sees the companion: reachable, gone, or asking for a (better) access key. */
export type ConnectionStatus = 'checking' | 'connected' | 'unreachable' | 'auth';

const savedPrefix = () => {
  const key = readAccessKey();
  return key ? keyPrefix(key) : null;
};
/** The companion refuses this browser's key, or wants one: 401, or 403 for a key without the scope. */
export const isKeyProblem = (error: unknown): error is ApiError =>
  error instanceof ApiError && (error.status === 401 || error.code === 'invalid_api_key' || error.code === 'permission_denied');

export class ServerStore {
  address = $state(typeof location === 'undefined' ? '' : location.origin);
  version = $state<string | null>(null);
  status = $state<ConnectionStatus>('checking');
  /** The companion's data folder was deleted or moved while it ran: nothing can be saved until it is back or Hearth restarts. */
  dataFolderGone = $state(false);
  /** Why the last check failed, in words. */
  problem = $state<string | null>(null);
  /** The error behind `problem`, for a tooltip. */
  detail = $state<string | null>(null);
  details = $state<ServerStatus | null>(null);
  detailsError = $state<string | null>(null);
  /** Model ids with a load or unload under way. */
  pending = $state<Record<string, 'loading' | 'unloading'>>({});
  actionError = $state<string | null>(null);
  /** Try again on a failed native build is under way. */
  retryingNative = $state(false);
  /** What is shown of the key saved in this browser (`hth_xxxxxx…`); the key itself is never kept here. */
  keyPrefix = $state<string | null>(savedPrefix());
  /** Why the last key the user gave was not saved: the companion's message, or a format problem. */
  keyError = $state<string | null>(null);
  savingKey = $state(false);

  // The URLs below are parsed once per change of the address and never mutated.
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  port = $derived(this.details?.address?.port ?? (this.address ? Number(new URL(this.address).port) || null : null));
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  host = $derived(this.details?.address?.host ?? (this.address ? new URL(this.address).hostname : null));

  /** `/health` says whether the companion answers; the API then says whether it lets this browser in. */
  async check(): Promise<ConnectionStatus> {
    try {
      this.version = (await health(AbortSignal.timeout(5000))).version;
      this.dataFolderGone = false;
    } catch (error) {
      // It answers, but cannot save anything: the page says so, and reading still works.
      if (error instanceof ApiError && error.code === 'data_folder_gone') this.dataFolderGone = true;
      else {
        this.#failed(error);
        return this.status;
      }
    }
    try {
      await probeApi(AbortSignal.timeout(5000));
      this.#connected();
    } catch (error) {
      // Anything but a key problem is for the request that meets it: the companion answered.
      if (isKeyProblem(error)) this.needsKey(error);
      else this.#connected();
    }
    return this.status;
  }

  #connected(): void {
    this.status = 'connected';
    this.problem = null;
    this.detail = null;
  }

  /** Told by the companion (here or by a chat request) that the key is missing, refused or not enough. */
  needsKey(error: ApiError): void {
    this.keyPrefix = savedPrefix();
    this.status = 'auth';
    this.problem = this.keyPrefix ? `The saved key ${this.keyPrefix} was not accepted.` : 'No key is saved in this browser.';
    this.detail = error.message;
  }

  /**
   * Checks a pasted key with the companion and keeps it in this browser only if it is accepted.
   * A refused key is not kept; the companion's message is in `keyError`.
   */
  async saveKey(text: string): Promise<boolean> {
    const key = text.trim();
    this.keyError = keyFormatProblem(key);
    if (this.keyError) return false;
    this.savingKey = true;
    try {
      await verifyKey(key, AbortSignal.timeout(10_000));
    } catch (error) {
      // The companion's own words for a refused key (401), a key without the scope (403) or a lockout (429).
      this.keyError = error instanceof ApiError && error.code !== 'unreachable' ? error.message : `The key could not be checked: ${describe(error)}`;
      return false;
    } finally {
      this.savingKey = false;
    }
    try {
      storeAccessKey(key);
    } catch (error) {
      this.keyError = `This browser would not keep the key: ${describe(error)}`;
      return false;
    }
    clearKeyRefusal();
    this.keyPrefix = keyPrefix(key);
    await this.check();
    return true;
  }

  /** Removes the key from this browser; requests go without one from now on. */
  async forgetKey(): Promise<void> {
    forgetAccessKey();
    clearKeyRefusal();
    this.keyPrefix = null;
    this.keyError = null;
    await this.check();
  }

  #failed(error: unknown): void {
    if (isKeyProblem(error)) {
      this.needsKey(error);
    } else {
      this.status = 'unreachable';
      this.problem = typeof navigator !== 'undefined' && !navigator.onLine ? 'This device is offline.' : 'The companion is not answering.';
      this.detail = describe(error);
    }
  }

  /** The companion stopped: nothing it had loaded is loaded now (the rest of its details stay, to show where it was). */
  forgetLoaded(): void {
    if (this.details?.loaded.length) this.details = { ...this.details, loaded: [] };
  }

  /** Told by a failed request that the companion is gone; confirmed by the next check. */
  markUnreachable(reason: string): void {
    this.status = 'unreachable';
    this.problem = reason;
  }

  /** Checks now, every `interval` ms, and when the browser goes on- or offline; returns the stop function. */
  watch(interval = 10_000): () => void {
    void this.check();
    const timer = setInterval(() => void this.check(), interval);
    const recheck = () => void this.check();
    // A key saved or forgotten in another tab of this app.
    const storage = (event: StorageEvent) => {
      if (event.key !== ACCESS_KEY_STORAGE && event.key !== null) return;
      clearKeyRefusal();
      this.keyPrefix = savedPrefix();
      recheck();
    };
    const stop = listen([window, 'online', recheck], [window, 'offline', recheck], [window, 'storage', storage]);
    return () => {
      clearInterval(timer);
      stop();
    };
  }

  async refreshDetails(): Promise<void> {
    try {
      this.details = await serverStatus();
      this.detailsError = null;
      // The admin session works (it may predate this page's note of it).
      if (!session.signedIn) session.markSignedIn();
      // Admin routes need no key, so they prove only that the companion is back: ask the API too.
      if (this.status === 'unreachable') await this.check();
    } catch (error) {
      this.detailsError = describe(error);
      if (error instanceof ApiError && error.code === 'permission_denied') {
        this.detailsError = 'Server details are only shown on the machine the companion runs on (loopback).';
      } else if (error instanceof ApiError && error.code === 'admin_credential_required') {
        this.detailsError = `Sign in to see the companion's folders and loaded models. ${session.howToSignIn}`;
        session.markSignedOut();
      } else if (!(error instanceof ApiError) || error.code === 'unreachable') this.#failed(error);
    }
  }

  /**
   * While the llama-server build or its native build runs (or the native one is about to start),
   * asks for the status every `interval` ms so its progress moves on the page; stops asking once
   * the builds are done. Returns the stop function.
   */
  followBuild(interval = 3000): () => void {
    const timer = setInterval(() => {
      const engine = this.details?.engine;
      const native = engine?.native?.build;
      // A native build with no reason to wait is about to start (Try again, or the quick build just ready).
      if (engine?.build.state === 'building' || native?.state === 'building' || (native?.state === 'absent' && !native.reason)) void this.refreshDetails();
    }, interval);
    return () => clearInterval(timer);
  }

  /** Try again after a failed native build: it starts again in the background. */
  async retryNativeBuild(): Promise<void> {
    this.retryingNative = true;
    this.actionError = null;
    try {
      await retryNativeBuild();
    } catch (error) {
      this.actionError = `The native build could not be started again: ${describe(error)}`;
    } finally {
      this.retryingNative = false;
      await this.refreshDetails();
    }
  }

  async load(id: string): Promise<void> {
    await this.#act(id, 'loading', () => loadModel(id));
  }

  async unload(id: string): Promise<void> {
    await this.#act(id, 'unloading', () => unloadModel(id));
  }

  async #act(id: string, state: 'loading' | 'unloading', action: () => Promise<unknown>): Promise<void> {
    this.pending[id] = state;
    this.actionError = null;
    try {
      await action();
    } catch (error) {
      this.actionError = `${state === 'loading' ? 'Loading' : 'Unloading'} ${id} failed: ${describe(error)}`;
    } finally {
      delete this.pending[id];
      await this.refreshDetails();
    }
  }
}

export const server = new ServerStore();
