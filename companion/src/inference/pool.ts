import type { LlamaContext, LlamaContextSequence } from 'node-llama-cpp';
import { HearthError } from '../errors.js';

interface Waiter {
  resolve: (sequence: LlamaContextSequence) => void;
  reject: (error: unknown) => void;
}

/**
 * Hands out the sequences of one context. Sequences are kept, not disposed, so a follow-up turn
 * reuses the evaluated prefix of an earlier one. The free sequence with the lowest id goes first:
 * llama.cpp decodes sequences with consecutive ids in one pass, so keeping the busy ones packed at
 * the low ids keeps each step one computation. Requests beyond the sequence count wait in a bounded
 * FIFO queue and take a sequence the moment one is released; when the queue is full the caller
 * gets a 429 whose Retry-After is `waitSeconds()`, the expected time until a sequence frees.
 */
export class SequencePool {
  private readonly free: LlamaContextSequence[] = [];
  /** Creation order, which is node-llama-cpp's sequence id while no sequence is disposed. */
  private readonly order = new Map<LlamaContextSequence, number>();
  private created = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    private readonly context: LlamaContext,
    readonly capacity: number,
    private readonly queueLimit: number,
    private readonly waitSeconds: () => number,
  ) {}

  get busy(): number {
    return this.created - this.free.length;
  }

  get queued(): number {
    return this.waiting.length;
  }

  acquire(signal: AbortSignal): Promise<LlamaContextSequence> {
    signal.throwIfAborted();
    if (this.free.length > 0) return Promise.resolve(this.takeLowest());
    if (this.created < this.capacity) {
      const sequence = this.context.getSequence();
      this.order.set(sequence, this.created++);
      return Promise.resolve(sequence);
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

  release(sequence: LlamaContextSequence): void {
    const next = this.waiting.shift();
    if (next) next.resolve(sequence);
    else this.free.push(sequence);
  }

  /** Fails every waiting request, e.g. when the model is being unloaded. */
  rejectWaiting(error: unknown): void {
    for (const waiter of this.waiting.splice(0)) waiter.reject(error);
  }

  /** The sequence's id in the context (its place in creation order). */
  idOf(sequence: LlamaContextSequence): number | undefined {
    return this.order.get(sequence);
  }

  private takeLowest(): LlamaContextSequence {
    let lowest = 0;
    for (let index = 1; index < this.free.length; index++) if (this.order.get(this.free[index]!)! < this.order.get(this.free[lowest]!)!) lowest = index;
    return this.free.splice(lowest, 1)[0]!;
  }
}
