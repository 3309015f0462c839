import { HearthError } from '../../errors.js';

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The server engine's admission: at most `capacity` requests run at once (one per llama-server
 * slot, so the server never queues and Hearth's busy and waiting figures are true), further ones
 * wait in a bounded FIFO queue, and a request beyond the queue gets a 429 with Retry-After.
 */
export class SlotQueue {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    readonly capacity: number,
    private readonly queueLimit: number,
    private readonly waitSeconds: () => number,
  ) {}

  get busy(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  acquire(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.running < this.capacity) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.queueLimit) {
      const retryAfter = this.waitSeconds();
      throw new HearthError(
        'rate_limit_exceeded',
        `All ${this.capacity} sequences of this model are busy and ${this.waiting.length} requests are waiting. Retry in about ${retryAfter} s.`,
        { retryAfter },
      );
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal.reason);
      };
      const waiter: Waiter = {
        resolve: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        reject,
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next.resolve();
    else this.running--;
  }

  rejectWaiting(error: unknown): void {
    for (const waiter of this.waiting.splice(0)) waiter.reject(error);
  }
}
