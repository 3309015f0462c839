/**
 * Why models failed to load, remembered while their file is unchanged so that every request does
 * not try again. A failure that may pass (an engine process that kept crashing) is forgotten after a
 * back-off that doubles with each repeat (one minute, then two... at most an hour); the owner's own
 * Load always tries again.
 */
import type { ModelFile } from './types.js';

const FIRST_BACKOFF_MS = 60_000;
const LONGEST_BACKOFF_MS = 3_600_000;

interface Failure {
  stamp: string;
  message: string;
  /** When a failure that may pass is tried again; absent for one that lasts while the file is unchanged. */
  retryAt?: number;
}

export function fileStamp(info: Pick<ModelFile, 'path' | 'sizeBytes'>): string {
  return `${info.path}:${info.sizeBytes}`;
}

export class LoadFailures {
  private readonly failures = new Map<string, Failure>();
  /** Failures that may pass, in a row per model: each doubles the back-off. */
  private readonly repeats = new Map<string, number>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** Remembers a failure; `passing` ones are forgotten after the back-off. */
  remember(info: Pick<ModelFile, 'id' | 'path' | 'sizeBytes'>, message: string, options: { passing?: boolean } = {}): void {
    let retryAt: number | undefined;
    if (options.passing) {
      const repeats = (this.repeats.get(info.id) ?? 0) + 1;
      this.repeats.set(info.id, repeats);
      retryAt = this.now() + Math.min(LONGEST_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (repeats - 1));
    }
    this.failures.set(info.id, { stamp: fileStamp(info), message, retryAt });
  }

  /** Why the model failed, while the file is unchanged and its back-off lasts. */
  message(info: Pick<ModelFile, 'id' | 'path' | 'sizeBytes'>): string | undefined {
    const failure = this.failures.get(info.id);
    if (!failure || failure.stamp !== fileStamp(info)) return undefined;
    if (failure.retryAt !== undefined && this.now() >= failure.retryAt) return undefined;
    return failure.message;
  }

  /** The owner asked for a load: the next one tries again (the back-off keeps its count). */
  forget(id: string): void {
    this.failures.delete(id);
  }

  /** The model loaded: its back-off starts over. */
  loaded(id: string): void {
    this.failures.delete(id);
    this.repeats.delete(id);
  }
}
