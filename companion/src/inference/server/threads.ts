/**
 * How many threads a llama-server process gets when its model's `threads` is `auto`: the cores
 * other programs leave free, measured from what they used over the last minute (/proc, Linux), not
 * from the load average at one moment. Measured on a 2-core machine (`npm run bench:threads`): on a
 * quiet machine every core makes 1.6–2.2× the tokens of one thread; with one busy program beside
 * it, one thread makes 1.1–1.4× what every core makes (llama.cpp's threads wait for each other at
 * every step, and one of them waits for the core the other program holds). So the count follows
 * the machine: the process is started with what is free, and restarted with a new count while its
 * model is idle when the machine has changed for a while (its conversations are saved first).
 * Programs running at a lower priority (`nice`, such as the engine's own background build) yield
 * their core and are not counted.
 */
import { readFileSync } from 'node:fs';

/** A snapshot of CPU time: the machine's busy and total ticks, and ours. */
interface Sample {
  at: number;
  busy: number;
  total: number;
  cpus: number;
  /** CPU ticks of each of our processes; one that ended keeps its last figure while the window holds it. */
  own: Map<number, number>;
}

export type ProcReader = (path: string) => string;

const readProc: ProcReader = (path) => readFileSync(path, 'utf8');

/** The threads for `cores` when other programs keep `others` cores busy: at least one, at most every core. */
export function threadsFor(cores: number, others: number): number {
  return Math.max(1, Math.min(cores, Math.floor(cores - others + 0.5)));
}

/**
 * Samples /proc/stat and our own processes' CPU time, keeping a minute of samples. `own` lists the
 * process ids that are Hearth's (this process and its engine processes): their time is not "other".
 */
export class CpuWatch {
  private samples: Sample[] = [];
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly own: () => number[],
    private readonly read: ProcReader = readProc,
    private readonly now: () => number = Date.now,
    private readonly windowMs = 60_000,
  ) {}

  /** Starts sampling every `everyMs` (the timer never keeps the process alive). */
  start(everyMs = 10_000): void {
    if (this.timer) return;
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Takes one sample; false where /proc cannot be read (not Linux). */
  sample(): boolean {
    const taken = this.take();
    if (!taken) return false;
    this.samples.push(taken);
    // Keep the newest sample at least a window old, and nothing older.
    const oldest = taken.at - this.windowMs;
    while (this.samples.length > 2 && this.samples[1]!.at <= oldest) this.samples.shift();
    return true;
  }

  /** Seconds of samples the figure rests on (0 when there is none yet). */
  spanSeconds(): number {
    const first = this.samples[0];
    const last = this.samples.at(-1);
    return first && last ? (last.at - first.at) / 1000 : 0;
  }

  /**
   * The cores other programs kept busy between the oldest kept sample and now, scaled to
   * `cores`; undefined without two samples.
   */
  othersOn(cores: number): number | undefined {
    const first = this.samples[0];
    const last = this.samples.at(-1);
    if (!first || !last || last.total <= first.total) return undefined;
    const ticksPerCpu = (last.total - first.total) / last.cpus;
    let own = 0;
    for (const [pid, ticks] of last.own) own += ticks - (first.own.get(pid) ?? 0);
    const others = Math.max(0, last.busy - first.busy - own) / ticksPerCpu;
    return Math.min(cores, (others * cores) / last.cpus);
  }

  private take(): Sample | undefined {
    let stat: string;
    try {
      stat = this.read('/proc/stat');
    } catch {
      return undefined;
    }
    const lines = stat.split('\n');
    const fields = lines[0]?.startsWith('cpu ') ? lines[0].trim().split(/\s+/).slice(1).map(Number) : [];
    if (fields.length < 4 || fields.some((value) => !Number.isFinite(value))) return undefined;
    // user nice system idle iowait irq softirq steal (guest time is inside user): busy leaves out nice, idle and iowait.
    const [user = 0, , system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
    const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
    const cpus = Math.max(1, lines.filter((line) => /^cpu\d+ /.test(line)).length);
    const own = new Map<number, number>();
    for (const pid of new Set(this.own())) {
      try {
        // After the command's closing parenthesis: field 14 (utime) and 15 (stime) of proc(5) are the 12th and 13th.
        const rest = this.read(`/proc/${pid}/stat`).split(') ').at(-1)!.split(' ');
        const ticks = Number(rest[11]) + Number(rest[12]);
        if (Number.isFinite(ticks)) own.set(pid, ticks);
      } catch {
        // ended: carried below while the window still holds its earlier figure
      }
    }
    const first = this.samples[0];
    const previous = this.samples.at(-1);
    for (const [pid, ticks] of previous?.own ?? []) if (!own.has(pid) && first?.own.has(pid)) own.set(pid, ticks);
    return { at: this.now(), busy: user + system + irq + softirq + steal, total, cpus, own };
  }
}

const ownPids = new Set<number>([process.pid]);
let shared: CpuWatch | undefined;

/** The machine's watch, shared by every model process and started at first use. */
export function machineWatch(): CpuWatch {
  if (!shared) {
    shared = new CpuWatch(() => [...ownPids]);
    shared.start();
  }
  return shared;
}

/** Counts a process as Hearth's own (an engine process) until the returned function is called. */
export function ownProcess(pid: number | undefined): () => void {
  if (pid === undefined) return () => undefined;
  ownPids.add(pid);
  return () => ownPids.delete(pid);
}

/** What the engine asks of the machine's watch (tests give their own). */
export type ThreadWatch = Pick<CpuWatch, 'othersOn' | 'spanSeconds' | 'sample'>;

/**
 * The threads for a process starting now: the cores the last minute left free (a second is
 * measured first when Hearth has only just started). Every core where /proc cannot be read.
 */
export async function freeThreads(cores: number, watch: ThreadWatch = machineWatch()): Promise<number> {
  if (watch.spanSeconds() < 1) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    watch.sample();
  }
  return threadsFor(cores, watch.othersOn(cores) ?? 0);
}

/** How often an idle model's thread count is looked at again, how long it must have been idle, and the least time between two restarts for it. */
export interface RethreadTiming {
  everyMs: number;
  idleMs: number;
  apartMs: number;
}
export const RETHREAD: RethreadTiming = { everyMs: 30_000, idleMs: 30_000, apartMs: 5 * 60_000 };

/**
 * Whether an idle model's process should restart with another thread count: the count the last
 * minute gives must differ from the running one at two looks in a row, and the last such restart
 * must be `apartMs` ago, so a machine whose load comes and goes does not restart it again and again.
 */
export class ThreadFollower {
  private pending?: number;
  private lastRestart = -Infinity;

  constructor(
    private readonly cores: number,
    private readonly watch: Pick<CpuWatch, 'othersOn'> = machineWatch(),
    private readonly now: () => number = Date.now,
    private readonly apartMs: number = RETHREAD.apartMs,
  ) {}

  /** The count to restart with, or undefined to keep `running`. */
  look(running: number): number | undefined {
    const others = this.watch.othersOn(this.cores);
    const wanted = others === undefined ? running : threadsFor(this.cores, others);
    if (wanted === running || this.now() - this.lastRestart < this.apartMs) {
      this.pending = undefined;
      return undefined;
    }
    if (this.pending !== wanted) {
      this.pending = wanted;
      return undefined;
    }
    this.pending = undefined;
    this.lastRestart = this.now();
    return wanted;
  }
}
