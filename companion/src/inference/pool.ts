import type { LlamaContext, LlamaContextSequence } from 'node-llama-cpp';
import { HearthError } from '../errors.js';

interface Waiter {
  resolve: (sequence: LlamaContextSequence) => void;
  reject: (error: unknown) => void;
}

/**
 * Hands out the sequences of one context. Sequences are kept, not disposed, so a follow-up turn
 * reuses the evaluated prefix of an earlier one. Requests beyond the sequence count wait in a
 * bounded queue; when it is full the caller gets a 429 with a Retry-After estimate.
 */
export class SequencePool {
  private readonly free: LlamaContextSequence[] = [];
  private created = 0;
  private readonly waiting: Waiter[] = [];
  private averageSeconds = 2;

  constructor(
    private readonly context: LlamaContext,
    readonly capacity: number,
    private readonly queueLimit: number,
  ) {}

  get busy(): number {
    return this.created - this.free.length;
  }

  get queued(): number {
    return this.waiting.length;
  }

  acquire(signal: AbortSignal): Promise<LlamaContextSequence> {
    signal.throwIfAborted();
    const ready = this.free.pop();
    if (ready) return Promise.resolve(ready);
    if (this.created < this.capacity) {
      this.created++;
      return Promise.resolve(this.context.getSequence());
    }
    if (this.waiting.length >= this.queueLimit) {
      const retryAfter = Math.max(1, Math.ceil((this.averageSeconds * (this.waiting.length + 1)) / this.capacity));
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
        resolve: (sequence) => {
          signal.removeEventListener('abort', onAbort);
          resolve(sequence);
        },
        reject,
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  release(sequence: LlamaContextSequence, seconds: number): void {
    this.averageSeconds = this.averageSeconds * 0.8 + seconds * 0.2;
    const next = this.waiting.shift();
    if (next) next.resolve(sequence);
    else this.free.push(sequence);
  }

  /** Fails every waiting request, e.g. when the model is being unloaded. */
  rejectWaiting(error: unknown): void {
    for (const waiter of this.waiting.splice(0)) waiter.reject(error);
  }
}
