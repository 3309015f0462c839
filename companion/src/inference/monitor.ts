/**
 * What the engine is doing, for the app's status stream: a sample of every loaded model's
 * tokens/s, queue and memory every few seconds (the last few minutes are kept), and the
 * progress of models being loaded. Reads the engine; changes nothing in it.
 */
import type { ActivitySample, ModelLoadState, StatusEvent } from '#shared/api/admin.js';
import type { Engine, LoadEvent } from './engine.js';

export interface MonitorOptions {
  /** The engine read at each sample (a function: the monitor exists before the engine it watches). */
  engine: () => Pick<Engine, 'status' | 'memoryBudgetBytes'>;
  /** Default 2 s. */
  intervalMs?: number;
  /** Samples kept; default 150 (five minutes at 2 s). */
  keep?: number;
  now?: () => number;
}

type Listener = (event: StatusEvent) => void;

/** Load progress is passed on at most this often per model (node-llama-cpp reports every few MB). */
const LOAD_STEP = 0.01;

export class EngineMonitor {
  private readonly samples: ActivitySample[] = [];
  private readonly loading = new Map<string, ModelLoadState>();
  private readonly listeners = new Set<Listener>();
  private readonly previous = new Map<string, { at: number; tokens: number }>();
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly options: MonitorOptions) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.timer ??= setInterval(() => this.sample(), this.options.intervalMs ?? 2000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.listeners.clear();
  }

  /** The engine's load hook. */
  readonly onLoad = (event: LoadEvent): void => {
    if (event.state === 'loading') {
      const last = this.loading.get(event.id);
      const fraction = Math.min(1, Math.max(0, event.fraction));
      if (last?.state === 'loading' && fraction - last.fraction < LOAD_STEP && fraction < 1 && fraction > 0) return;
      this.loading.set(event.id, { id: event.id, state: 'loading', fraction });
    } else this.loading.delete(event.id);
    this.emit({ type: 'load', load: event.state === 'loading' ? this.loading.get(event.id)! : event });
  };

  /** Takes one sample now and sends it to every listener. */
  sample(): ActivitySample {
    const at = this.now();
    const models = this.options
      .engine()
      .status()
      .map((model) => {
        const before = this.previous.get(model.id);
        const seconds = before ? (at - before.at) / 1000 : 0;
        const produced = before ? Math.max(0, model.generatedTokens - before.tokens) : 0;
        this.previous.set(model.id, { at, tokens: model.generatedTokens });
        return {
          id: model.id,
          tokens_per_second: seconds > 0 ? Math.round((produced / seconds) * 10) / 10 : 0,
          busy: model.busy,
          queued: model.queued,
          memory_bytes: model.memoryBytes ?? 0,
        };
      });
    for (const id of this.previous.keys()) if (!models.some((model) => model.id === id)) this.previous.delete(id);
    const sample = { at, models };
    this.samples.push(sample);
    if (this.samples.length > (this.options.keep ?? 150)) this.samples.shift();
    this.emit({ type: 'sample', sample, memory_budget_bytes: this.options.engine().memoryBudgetBytes });
    return sample;
  }

  snapshot(): Pick<Extract<StatusEvent, { type: 'snapshot' }>, 'memory_budget_bytes' | 'samples' | 'loading'> {
    return { memory_budget_bytes: this.options.engine().memoryBudgetBytes, samples: [...this.samples], loading: [...this.loading.values()] };
  }

  /** Every event from now on; returns the function that stops them. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: StatusEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
