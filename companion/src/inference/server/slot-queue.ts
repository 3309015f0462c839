import { joinLine, type Waiter as LineWaiter } from '../waiting-line.js';

type Waiter = LineWaiter<void>;

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
    return joinLine(
      { waiting: this.waiting, capacity: this.capacity, queueLimit: this.queueLimit, waitSeconds: this.waitSeconds },
      signal,
      (handlers) => handlers,
    );
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
