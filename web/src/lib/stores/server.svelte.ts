import { ApiError } from '$lib/api/client';
import { health, loadModel, serverStatus, unloadModel } from '$lib/api/server';
import type { ServerStatus } from '$shared/api/admin';

/** How the page sees the companion: reachable, gone, or asking for a key. */
export type ConnectionStatus = 'checking' | 'connected' | 'unreachable' | 'auth';

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

export class ServerStore {
  address = $state(typeof location === 'undefined' ? '' : location.origin);
  version = $state<string | null>(null);
  status = $state<ConnectionStatus>('checking');
  /** Why the last check failed, in words. */
  problem = $state<string | null>(null);
  /** The error behind `problem`, for a tooltip. */
  detail = $state<string | null>(null);
  details = $state<ServerStatus | null>(null);
  detailsError = $state<string | null>(null);
  /** Model ids with a load or unload under way. */
  pending = $state<Record<string, 'loading' | 'unloading'>>({});
  actionError = $state<string | null>(null);

  port = $derived(this.details?.address?.port ?? (this.address ? Number(new URL(this.address).port) || null : null));
  host = $derived(this.details?.address?.host ?? (this.address ? new URL(this.address).hostname : null));

  async check(): Promise<ConnectionStatus> {
    try {
      this.version = (await health(AbortSignal.timeout(5000))).version;
      this.status = 'connected';
      this.problem = null;
      this.detail = null;
    } catch (error) {
      this.#failed(error);
    }
    return this.status;
  }

  #failed(error: unknown): void {
    if (error instanceof ApiError && (error.code === 'invalid_api_key' || error.status === 401)) {
      this.status = 'auth';
      this.problem = 'The companion asks for an API key.';
    } else {
      this.status = 'unreachable';
      this.problem = typeof navigator !== 'undefined' && !navigator.onLine ? 'This device is offline.' : 'The companion is not answering.';
      this.detail = describe(error);
    }
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
    window.addEventListener('online', recheck);
    window.addEventListener('offline', recheck);
    return () => {
      clearInterval(timer);
      window.removeEventListener('online', recheck);
      window.removeEventListener('offline', recheck);
    };
  }

  async refreshDetails(): Promise<void> {
    try {
      this.details = await serverStatus();
      this.detailsError = null;
      this.status = 'connected';
    } catch (error) {
      this.detailsError = describe(error);
      if (error instanceof ApiError && error.code === 'permission_denied') {
        this.detailsError = 'Server details are only shown on the machine the companion runs on (loopback).';
      } else if (!(error instanceof ApiError) || error.code === 'unreachable') this.#failed(error);
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
