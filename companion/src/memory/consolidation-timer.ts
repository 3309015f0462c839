import type { Logger } from '../logger.js';
import type { Db } from '../store/database.js';

const RETRY_WHEN_BUSY_MS = 60_000;
const STATE_KEY = 'consolidated_at';

export interface ConsolidationTimerOptions {
  intervalMs: () => number;
  /** No distillation running and no recent ingestion. */
  idle: () => boolean;
  run: () => Promise<unknown>;
  log: Logger;
}

/**
 * The scheduled consolidation (docs/memory.md rule 5): due one interval after the last run (kept in
 * the database, so restarts do not reset it), and run only when memory is idle; a busy moment
 * postpones it by a minute. An on-demand run counts as a run.
 */
export class ConsolidationTimer {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly options: ConsolidationTimerOptions,
  ) {}

  lastRun(): number | undefined {
    const row = this.db.prepare<[string], { value: string }>('SELECT value FROM memory_state WHERE key = ?').get(STATE_KEY);
    return row ? Number(row.value) : undefined;
  }

  start(): void {
    this.stopped = false;
    if (this.lastRun() === undefined) this.record(Date.now());
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Records a run (scheduled or on demand) and schedules the next. */
  ran(): void {
    this.record(Date.now());
    if (!this.stopped && this.timer) this.schedule();
  }

  private schedule(delayMs?: number): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    const due = (this.lastRun() ?? Date.now()) + this.options.intervalMs();
    this.timer = setTimeout(() => void this.fire(), Math.max(0, delayMs ?? due - Date.now()));
    this.timer.unref();
  }

  private async fire(): Promise<void> {
    if (this.stopped) return;
    const due = (this.lastRun() ?? 0) + this.options.intervalMs();
    if (Date.now() < due) return this.schedule();
    if (!this.options.idle()) return this.schedule(RETRY_WHEN_BUSY_MS);
    try {
      await this.options.run();
    } catch (error) {
      this.options.log.error({ err: error }, 'scheduled memory consolidation failed');
      this.record(Date.now());
    }
    this.schedule();
  }

  private record(time: number): void {
    this.db.prepare('INSERT OR REPLACE INTO memory_state (key, value) VALUES (?, ?)').run(STATE_KEY, String(time));
  }
}
