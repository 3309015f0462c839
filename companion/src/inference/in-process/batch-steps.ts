/** One decode step of a context: every active sequence advanced together (node-llama-cpp's report). */
export interface BatchStep {
  /** The sequences with tokens in this step, in ascending order. */
  sequenceIds: number[];
  tokens: number;
  threads: number;
  decodeMs: number;
}

export type StepListener = (step: BatchStep) => void;

/** A pause between steps longer than this means the model went idle; it is not a step interval. */
const IDLE_GAP_MS = 1000;

/**
 * Counts the decode steps of one loaded model and measures how long a step takes from end to end
 * (decode, sampling, and the JavaScript between steps), which is what a waiting request waits for.
 */
export class BatchSteps {
  count = 0;
  private lastEnd?: number;
  private intervalMs?: number;
  private readonly listeners = new Set<StepListener>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Counts a step; returns how long it took from the previous step's end, unless the model was idle between them. */
  record(step: BatchStep): number | undefined {
    const at = this.now();
    this.count++;
    let interval: number | undefined;
    if (this.lastEnd !== undefined && at - this.lastEnd < IDLE_GAP_MS) {
      interval = at - this.lastEnd;
      this.intervalMs = this.intervalMs === undefined ? interval : this.intervalMs * 0.8 + interval * 0.2;
    }
    this.lastEnd = at;
    for (const listener of this.listeners) listener(step);
    return interval;
  }

  /** Milliseconds per step while the model is busy, once measured. */
  get stepMs(): number | undefined {
    return this.intervalMs;
  }

  observe(listener: StepListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
