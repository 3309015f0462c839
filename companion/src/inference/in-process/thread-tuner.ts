import { loadavg } from 'node:os';

/** One decoded batch, as node-llama-cpp reports it. */
export interface DecodedStep {
  tokens: number;
  threads: number;
  decodeMs: number;
  /**
   * The whole step, from the previous step's end to this one's: decode, sampling and the
   * JavaScript between steps (absent after an idle pause). Preferred over decodeMs when given.
   */
  stepMs?: number;
}

export interface ThreadTunerOptions {
  /** Thread counts to choose from, e.g. [1, 2] on two cores. */
  candidates: number[];
  /** The machine's cores: a count above the cores other work leaves free is not tried (default: the largest candidate). */
  cores?: number;
  /** Steps measured per candidate in one trial (default 5, at least 3): its figure is their median. */
  trialSteps?: number;
  /** Decode steps of one batch size after which it is measured again, even on a steady load (default 2000). */
  retrialSteps?: number;
  /** A change of the 1-minute load average that starts a new trial (default 0.5). */
  loadShift?: number;
  /** Least time between two trials of one batch size, in ms (default 10 s). */
  minTrialGapMs?: number;
  /** The count to try first, e.g. the one chosen before a restart. */
  start?: number;
  /** Called when a trial settles a batch size's choice. */
  onChoice?: (choice: ThreadChoice) => void;
  /** The machine's load; a parameter so tests can drive it. */
  load?: () => number;
  now?: () => number;
}

/** The choice for one range of batch sizes, for status pages and the benchmark. */
export interface ThreadChoice {
  /** Batch sizes (tokens per decode) this choice covers, e.g. "1", "5-8", "65+". */
  tokens: string;
  threads: number;
  /** Median ms per token of each candidate in the last trial. */
  msPerToken: Record<number, number>;
  trials: number;
}

interface Bucket {
  label: string;
  choice: number;
  trial?: { samples: Map<number, number[]>; order: number[]; next: number };
  measured: Map<number, number>;
  /** Steps since its last trial ended. */
  steps: number;
  live: number[];
  trials: number;
  trialLoad: number;
  trialAt: number;
}

const LIVE_WINDOW = 16;
/**
 * A candidate whose median is this much slower than the best one's is not tried further in this
 * trial, once it has MIN_SAMPLES measured steps: one slow step (a page fault, another program's
 * burst) must not decide. The next trial tries it again.
 */
const HOPELESS = 3;
const MIN_SAMPLES = 3;
/** How long the load average remembers: thread counts used this recently count as this process's load. */
const LOAD_MEMORY_MS = 60_000;
/** The chosen count running this much slower than its trial figure starts a new trial. */
const DRIFT = 1.5;
/**
 * More threads must decode at least this much faster per token to be chosen. Their cost does not
 * all show in the decode time: on two cores a second decode thread competes with sampling, the
 * event loop and the clients, and one stream chosen at two threads for a 5 % faster decode ran at
 * 100 tokens/s where one thread ran at 240.
 */
const NEAR_TIE = 1.25;
/**
 * A trial visits each candidate for this many consecutive steps and keeps all but the first: a
 * step's whole time includes work the previous step left (with more threads, the event loop and
 * the clients wait during the decode and catch up after it), so the first step of a visit still
 * carries the previous candidate's cost.
 */
const VISIT = 3;

/**
 * Chooses the thread count per batch size by measuring real decode steps. llama.cpp uses n_threads
 * for one-token decodes and n_threads_batch for larger ones, and which count is fastest depends on
 * the batch size and on what else the machine runs: on a 2-core machine shared with other work, one
 * thread is often fastest for one stream while two win for eight. Each batch-size range runs a short
 * trial of every candidate (interleaved, so a passing load affects them alike) and judges each by the
 * median of its steps, at least three after the first of each visit, so one slow step decides nothing.
 * A new trial starts when the load average moves, when the chosen count runs clearly slower than it
 * measured, and in any case every `retrialSteps` steps, so no count is ruled out for good. The choice
 * is the fewest threads within a near tie of the fastest count of the latest trial, never a count
 * that measured clearly slower.
 */
export class ThreadTuner {
  private readonly buckets = new Map<number, Bucket>();
  private readonly candidates: number[];
  private readonly trialSteps: number;
  private readonly loadShift: number;
  private readonly minTrialGapMs: number;
  private readonly load: () => number;
  private readonly now: () => number;
  private readonly start: number;
  private readonly cores: number;
  private readonly onChoice?: (choice: ThreadChoice) => void;
  private readonly retrialSteps: number;
  private allowedAt = -Infinity;
  private allowedCounts: number[] = [];
  /** When each thread count last ran a step: the load average still carries it for about a minute. */
  private readonly usedAt = new Map<number, number>();

  constructor(options: ThreadTunerOptions) {
    this.candidates = [...new Set(options.candidates)].filter((count) => count >= 1).sort((a, b) => a - b);
    if (this.candidates.length === 0) throw new Error('ThreadTuner needs at least one candidate thread count.');
    this.trialSteps = Math.max(MIN_SAMPLES, options.trialSteps ?? 5);
    this.retrialSteps = options.retrialSteps ?? 2000;
    this.loadShift = options.loadShift ?? 0.5;
    this.minTrialGapMs = options.minTrialGapMs ?? 10_000;
    this.load = options.load ?? (() => loadavg()[0]!);
    this.now = options.now ?? (() => performance.now());
    this.start = options.start !== undefined && this.candidates.includes(options.start) ? options.start : this.candidates[0]!;
    this.cores = options.cores ?? this.maxThreads;
    this.onChoice = options.onChoice;
  }

  /** The most threads any choice may use: the context is created with this many. */
  get maxThreads(): number {
    return this.candidates.at(-1)!;
  }

  /** Threads for the next decode of `tokens` tokens. */
  threadsFor(tokens: number): number {
    const bucket = this.bucket(tokens);
    if (!bucket.trial && this.shouldRetry(bucket)) this.startTrial(bucket);
    const trial = bucket.trial;
    if (trial) return trial.order[Math.floor(trial.next / VISIT) % trial.order.length]!;
    const allowed = this.allowed();
    return allowed.includes(bucket.choice) ? bucket.choice : allowed.at(-1)!;
  }

  /**
   * The counts worth trying under the current load: more threads than the cores other work leaves
   * free only fight that work for them (a decode waits at every barrier for a descheduled thread;
   * on a saturated 2-core machine one two-thread step was measured at over a second where one
   * thread took 43 ms). The load average includes this process's own decode threads: as many as
   * the most it used within the last minute (at least one) are taken as ours, or running two
   * threads would by itself rule two threads out at the next trial.
   */
  private allowed(): number[] {
    if (this.now() - this.allowedAt < 1000) return this.allowedCounts;
    const ours = Math.max(1, ...[...this.usedAt].filter(([, at]) => this.now() - at < LOAD_MEMORY_MS).map(([count]) => count));
    const spare = Math.max(1, Math.ceil(this.cores - Math.max(0, this.load() - ours)));
    const fitting = this.candidates.filter((count) => count <= spare);
    this.allowedCounts = fitting.length > 0 ? fitting : [this.candidates[0]!];
    this.allowedAt = this.now();
    return this.allowedCounts;
  }

  /** Records a decoded step; the threads it reports are the ones it ran with. */
  record(step: DecodedStep): void {
    if (step.tokens <= 0 || !(step.decodeMs >= 0)) return;
    const bucket = this.bucket(step.tokens);
    const msPerToken = (step.stepMs ?? step.decodeMs) / step.tokens;
    this.usedAt.set(step.threads, this.now());
    const trial = bucket.trial;
    if (!trial) {
      bucket.steps++;
      if (step.threads !== bucket.choice) return;
      bucket.live.push(msPerToken);
      if (bucket.live.length > LIVE_WINDOW) bucket.live.shift();
      return;
    }
    if (!trial.order.includes(step.threads)) return;
    const firstOfVisit = trial.next % VISIT === 0;
    trial.next++;
    if (firstOfVisit) return;
    const samples = trial.samples.get(step.threads) ?? [];
    samples.push(msPerToken);
    trial.samples.set(step.threads, samples);
    // Stop trying a count whose median runs several times slower than the best one's, once it has enough steps to judge.
    const judged = [...trial.samples].filter(([, values]) => values.length >= MIN_SAMPLES);
    if (judged.length > 1) {
      const best = Math.min(...judged.map(([, values]) => median(values)));
      trial.order = trial.order.filter((count) => !judged.some(([judgedCount, values]) => judgedCount === count && median(values) > best * HOPELESS));
    }
    if (trial.order.every((count) => (trial.samples.get(count)?.length ?? 0) >= this.trialSteps)) this.finishTrial(bucket);
  }

  choices(): ThreadChoice[] {
    return [...this.buckets.entries()].sort(([a], [b]) => a - b).map(([, bucket]) => describe(bucket));
  }

  private bucket(tokens: number): Bucket {
    const index = tokens <= 1 ? 0 : Math.min(7, Math.ceil(Math.log2(tokens)));
    let bucket = this.buckets.get(index);
    if (!bucket) {
      const low = index === 0 ? 1 : 2 ** (index - 1) + 1;
      const label = index === 0 ? '1' : index === 7 ? `${low}+` : low === 2 ** index ? `${low}` : `${low}-${2 ** index}`;
      bucket = { label, choice: this.start, measured: new Map(), steps: 0, live: [], trials: 0, trialLoad: 0, trialAt: -Infinity };
      this.buckets.set(index, bucket);
      if (this.candidates.length > 1) this.startTrial(bucket);
    }
    return bucket;
  }

  private shouldRetry(bucket: Bucket): boolean {
    if (this.candidates.length < 2 || this.now() - bucket.trialAt < this.minTrialGapMs) return false;
    if (Math.abs(this.load() - bucket.trialLoad) >= this.loadShift) return true;
    // A count that lost once (perhaps to a passing load) gets another chance now and then.
    if (bucket.steps >= this.retrialSteps) return true;
    const measured = bucket.measured.get(bucket.choice);
    return measured !== undefined && bucket.live.length >= LIVE_WINDOW && median(bucket.live) > measured * DRIFT;
  }

  private startTrial(bucket: Bucket): void {
    // Start with the current choice so a short trial never begins on an untried, possibly slow count.
    const allowed = this.allowed();
    const order = [...new Set([...(allowed.includes(bucket.choice) ? [bucket.choice] : []), ...allowed])];
    bucket.trial = { samples: new Map(), order, next: 0 };
    bucket.trialLoad = this.load();
    bucket.trialAt = this.now();
  }

  private finishTrial(bucket: Bucket): void {
    const trial = bucket.trial!;
    bucket.measured = new Map([...trial.samples].map(([count, samples]) => [count, median(samples)]));
    const fastest = Math.min(...bucket.measured.values());
    bucket.choice = Math.min(...[...bucket.measured].filter(([, ms]) => ms <= fastest * NEAR_TIE).map(([count]) => count));
    bucket.trial = undefined;
    bucket.live = [];
    bucket.steps = 0;
    bucket.trials++;
    bucket.trialAt = this.now();
    this.onChoice?.(describe(bucket));
  }
}

function describe(bucket: Bucket): ThreadChoice {
  return {
    tokens: bucket.label,
    threads: bucket.choice,
    msPerToken: Object.fromEntries([...bucket.measured].map(([count, ms]) => [count, round(ms)])),
    trials: bucket.trials,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
