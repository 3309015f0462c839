import { health } from '$lib/api/client';

export type ServerStatus = 'checking' | 'connected' | 'unreachable';

export class ServerStore {
  address = $state(location.origin);
  version = $state<string | null>(null);
  status = $state<ServerStatus>('checking');

  async check(): Promise<void> {
    try {
      this.version = (await health()).version;
      this.status = 'connected';
    } catch {
      this.status = 'unreachable';
    }
  }

  /** Checks now and then every `interval` milliseconds; returns the function that stops it. */
  watch(interval = 15_000): () => void {
    void this.check();
    const timer = setInterval(() => void this.check(), interval);
    return () => clearInterval(timer);
  }
}

export const server = new ServerStore();
