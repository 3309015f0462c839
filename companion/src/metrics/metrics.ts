import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RouteFamily } from '#shared/api/routes.js';
import type { LoadEvent } from '../inference/engine.js';
import type { LoadedStatus } from '../inference/engine.js';
import type { Pool } from '../providers/pool.js';
import type { ProviderObserver } from '../providers/pools.js';
import type { GenerationObserver } from '../inference/text-pipeline.js';
import { ModelLabels, type ModelKind } from './labels.js';
import type { StoredStates } from './stored-states.js';

/**
 * The numbers GET /metrics reports, in the Prometheus text format (prom-client). Events are
 * counted as they happen (requests, errors, latencies, tokens, model loads); everything that is
 * state (sequences, queues, memory, pool endpoints, stored runs and jobs) is read when the metrics
 * are read, from the same functions the admin status and the Server screen read, so the two can
 * never disagree. Labels are route families, model ids (bounded: labels.ts), provider names and
 * endpoint URLs from the configuration, and fixed state names.
 */

/** Where the state-like figures come from; each is read at every scrape. */
export interface MetricSources {
  engine(): { status(): LoadedStatus[]; readonly memoryBudgetBytes: number };
  pools(): { name: string; pool: Pool }[];
  stored(): StoredStates;
  /** Ids of this machine's models as last scanned (a request naming one may be labelled with it even when it failed). */
  localModels(): readonly string[];
  /**
   * For an id addressed to a configured provider (`<provider>/<model>`): whether the provider
   * lists that model or the configuration names it; undefined for any other id.
   */
  providerModel(id: string): boolean | undefined;
}

export interface RequestRecord {
  family: RouteFamily;
  /** The `model` the request named, when it named one. */
  model: string | undefined;
  status: number;
  seconds: number;
  /** The error table's code of a failed request. */
  code: string | undefined;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export class Metrics implements GenerationObserver, ProviderObserver {
  readonly registry = new Registry();
  private readonly models = new ModelLabels();
  private readonly requests: Counter<'family' | 'model' | 'status'>;
  private readonly errors: Counter<'family' | 'model' | 'code'>;
  private readonly duration: Histogram<'family' | 'model'>;
  private readonly firstTokens: Histogram<'model'>;
  private readonly promptTokens: Counter<'model'>;
  private readonly interruptions: Counter<'model'>;
  private readonly loads: Counter<'model' | 'outcome'>;
  /** Completion tokens of provider models (local models' come from the engine's own count). */
  private readonly providerTokens = new Map<string, number>();
  /** Models loaded by id, for the unload count (loads that are no longer loaded). */
  private readonly loaded = new Map<string, number>();
  /** The stored runs and jobs read once for the scrape in progress (render sets it). */
  private scrapeStates: StoredStates | undefined;

  constructor(private readonly sources: MetricSources) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'hearth_requests_total',
      help: 'HTTP requests answered, by route family, model and status code.',
      labelNames: ['family', 'model', 'status'],
      registers,
    });
    this.errors = new Counter({
      name: 'hearth_request_errors_total',
      help: "Requests answered with an error, by route family, model and the error's code (docs/errors.md).",
      labelNames: ['family', 'model', 'code'],
      registers,
    });
    this.duration = new Histogram({
      name: 'hearth_request_duration_seconds',
      help: 'Time from receiving a request to the end of its answer (a stream: its last event), by route family and model.',
      labelNames: ['family', 'model'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.firstTokens = new Histogram({
      name: 'hearth_first_token_seconds',
      help: 'Time to the first generated text of a streamed generation (local: from asking the engine, loading and queueing included; provider: from sending the request to its first bytes).',
      labelNames: ['model'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.promptTokens = new Counter({
      name: 'hearth_prompt_tokens_total',
      help: 'Prompt tokens of finished generations (provider models: as their usage reports).',
      labelNames: ['model'],
      registers,
    });
    this.interruptions = new Counter({
      name: 'hearth_provider_interruptions_total',
      help: 'Provider replies that broke after they had begun (the stream ended with a provider_interrupted error event).',
      labelNames: ['model'],
      registers,
    });
    this.loads = new Counter({
      name: 'hearth_model_loads_total',
      help: 'Local model loads, by outcome (ready or failed).',
      labelNames: ['model', 'outcome'],
      registers,
    });
    this.stateMetrics(registers);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The metrics in the Prometheus text exposition format. */
  async render(): Promise<string> {
    // One read of the database serves the three stored-state gauges of this scrape.
    this.scrapeStates = this.sources.stored();
    try {
      return await this.registry.metrics();
    } finally {
      this.scrapeStates = undefined;
    }
  }

  /** One answered HTTP request. */
  observeRequest(record: RequestRecord): void {
    const model = this.models.label(record.model, this.kindOf(record.model, record.status < 400));
    this.requests.inc({ family: record.family, model, status: String(record.status) });
    if (record.status >= 400) this.errors.inc({ family: record.family, model, code: record.code ?? String(record.status) });
    this.duration.observe({ family: record.family, model }, record.seconds);
  }

  /** The engine's load events (loading progress is not counted). */
  readonly onLoad = (event: LoadEvent): void => {
    if (event.state === 'loading') return;
    const model = this.models.label(event.id, 'local');
    this.loads.inc({ model, outcome: event.state });
    if (event.state === 'ready') this.loaded.set(model, (this.loaded.get(model) ?? 0) + 1);
  };

  firstToken(model: string, seconds: number): void {
    this.firstTokens.observe({ model: this.models.label(model, 'local') }, seconds);
  }

  generated(model: string, promptTokens: number): void {
    this.promptTokens.inc({ model: this.models.label(model, 'local') }, promptTokens);
  }

  firstChunk(model: string, seconds: number): void {
    this.firstTokens.observe({ model: this.providerLabel(model) }, seconds);
  }

  usage(model: string, promptTokens: number, completionTokens: number): void {
    const label = this.providerLabel(model);
    this.promptTokens.inc({ model: label }, promptTokens);
    this.providerTokens.set(label, (this.providerTokens.get(label) ?? 0) + completionTokens);
  }

  interrupted(model: string): void {
    this.interruptions.inc({ model: this.providerLabel(model) });
  }

  /**
   * What a request's model is: a provider's when it is addressed to one (known only when listed
   * or configured, whatever the provider answered); else local when it is one of this machine's
   * models or Hearth served it (`served`).
   */
  private kindOf(id: string | undefined, served: boolean): ModelKind {
    if (id === undefined) return undefined;
    const remote = this.sources.providerModel(id);
    if (remote !== undefined) return remote ? 'provider' : undefined;
    return served || this.sources.localModels().includes(id) ? 'local' : undefined;
  }

  /** The label of a provider model an answer came from. */
  private providerLabel(id: string): string {
    return this.models.label(id, this.sources.providerModel(id) ? 'provider' : undefined);
  }

  /** Figures read at each scrape: the engine's status, the pools, the stored runs and jobs. */
  private stateMetrics(registers: Registry[]): void {
    const { sources, models } = this;
    /**
     * A figure of each loaded local model, read from the engine's status at each scrape: a gauge (a
     * model without the figure reads 0) or a counter (a model without it is left out).
     */
    const perModel = (kind: 'gauge' | 'counter', name: string, help: string, read: (model: LoadedStatus) => number | undefined) => {
      const each = (record: (labels: { model: string }, value: number) => void) => {
        for (const model of sources.engine().status()) {
          const value = kind === 'gauge' ? (read(model) ?? 0) : read(model);
          if (value !== undefined) record({ model: models.label(model.id, 'local') }, value);
        }
      };
      const common = { name, help, labelNames: ['model'] as const, registers };
      if (kind === 'gauge')
        new Gauge({
          ...common,
          collect() {
            this.reset();
            each((labels, value) => this.set(labels, value));
          },
        });
      else
        new Counter({
          ...common,
          collect() {
            this.reset();
            each((labels, value) => this.inc(labels, value));
          },
        });
    };
    const engineGauge = (name: string, help: string, read: (model: LoadedStatus) => number | undefined) => perModel('gauge', name, help, read);
    engineGauge('hearth_model_sequences', 'Sequences (requests generated at once) of each loaded local model.', (model) => model.sequences);
    engineGauge('hearth_model_sequences_busy', 'Sequences generating now, per loaded local model.', (model) => model.busy);
    engineGauge('hearth_model_queue_depth', 'Requests waiting for a sequence, per loaded local model.', (model) => model.queued);
    engineGauge('hearth_model_memory_bytes', "A loaded model's weights and context state (its share of the memory budget).", (model) => model.memoryBytes);
    new Gauge({
      name: 'hearth_model_build',
      help: 'The llama-server binary each model on the llama-server engine runs: 1 on its build label (prebuilt: the quick build; native: the build for this CPU).',
      labelNames: ['model', 'build'],
      registers,
      collect() {
        this.reset();
        for (const model of sources.engine().status()) if (model.build) this.set({ model: models.label(model.id, 'local'), build: model.build }, 1);
      },
    });
    new Gauge({
      name: 'hearth_memory_budget_bytes',
      help: 'The memory budget loaded local models share (models.memory_budget_mb).',
      registers,
      collect() {
        this.set(sources.engine().memoryBudgetBytes);
      },
    });
    new Gauge({
      name: 'hearth_memory_budget_used_bytes',
      help: 'Memory the loaded local models take of the budget now.',
      registers,
      collect() {
        this.set(
          sources
            .engine()
            .status()
            .reduce((sum, model) => sum + (model.memoryBytes ?? 0), 0),
        );
      },
    });
    const providerTokens = this.providerTokens;
    new Counter({
      name: 'hearth_generated_tokens_total',
      help: "Generated tokens: a loaded local model's count since it was loaded (the Server screen's figure; it starts again from 0 when the model is loaded again), a provider model's from its reported usage.",
      labelNames: ['model'],
      registers,
      collect() {
        this.reset();
        for (const model of sources.engine().status()) this.inc({ model: models.label(model.id, 'local') }, model.generatedTokens);
        for (const [model, tokens] of providerTokens) this.inc({ model }, tokens);
      },
    });
    for (const [name, help, field] of [
      ['hearth_draft_tokens_total', 'Speculative decoding: tokens the draft model proposed for a loaded local model since it was loaded.', 'tokens'],
      ['hearth_draft_accepted_tokens_total', 'Speculative decoding: proposed tokens the model accepted, since it was loaded.', 'accepted'],
    ] as const)
      perModel('counter', name, help, (model) => (model.draft && 'model' in model.draft ? model.draft[field] : undefined));
    const loaded = this.loaded;
    new Counter({
      name: 'hearth_model_unloads_total',
      help: 'Local model unloads (idle, memory pressure, or asked for): loads that are no longer loaded.',
      labelNames: ['model'],
      registers,
      collect() {
        this.reset();
        const now = new Set(
          sources
            .engine()
            .status()
            .map((model) => models.label(model.id, 'local')),
        );
        for (const [model, count] of loaded) this.inc({ model }, Math.max(0, count - (now.has(model) ? 1 : 0)));
      },
    });
    this.storedMetrics(registers);
    this.poolMetrics(registers);
  }

  private storedMetrics(registers: Registry[]): void {
    const states = () => this.scrapeStates ?? this.sources.stored();
    const stateGauge = (name: string, help: string, pick: (stored: StoredStates) => Record<string, number>) =>
      new Gauge({
        name,
        help,
        labelNames: ['state'],
        registers,
        collect() {
          this.reset();
          for (const [state, count] of Object.entries(pick(states()))) this.set({ state }, count);
        },
      });
    stateGauge(
      'hearth_agent_runs',
      'Agent runs Hearth keeps, by state (running, awaiting_approval, completed, failed, cancelled).',
      (stored) => stored.agentRuns,
    );
    stateGauge('hearth_image_jobs', 'Image jobs Hearth keeps, by state.', (stored) => stored.imageJobs);
    stateGauge('hearth_media_jobs', 'Hosted media jobs Hearth keeps, by state.', (stored) => stored.mediaJobs);
  }

  private poolMetrics(registers: Registry[]): void {
    const { sources } = this;
    const labelNames = ['provider', 'endpoint'] as const;
    const each = (visit: (labels: { provider: string; endpoint: string }, endpoint: Pool['endpoints'][number]) => void) => {
      for (const { name, pool } of sources.pools()) for (const endpoint of pool.endpoints) visit({ provider: name, endpoint: endpoint.display }, endpoint);
    };
    new Gauge({
      name: 'hearth_provider_endpoint_up',
      help: "1 while a provider endpoint's circuit is closed (it takes requests), 0 while open or being probed.",
      labelNames,
      registers,
      collect() {
        this.reset();
        each((labels, endpoint) => this.set(labels, endpoint.circuit === 'closed' ? 1 : 0));
      },
    });
    new Gauge({
      name: 'hearth_provider_endpoint_outstanding',
      help: 'Requests sent to a provider endpoint and not finished (streams count until they end).',
      labelNames,
      registers,
      collect() {
        this.reset();
        each((labels, endpoint) => this.set(labels, endpoint.outstanding));
      },
    });
    new Counter({
      name: 'hearth_provider_endpoint_failovers_total',
      help: 'Requests moved from a provider endpoint to another after it failed before answering (connection error, timeout, 5xx, 429).',
      labelNames,
      registers,
      collect() {
        this.reset();
        each((labels, endpoint) => this.inc(labels, endpoint.failovers));
      },
    });
    new Counter({
      name: 'hearth_provider_endpoint_circuit_transitions_total',
      help: "Times a provider endpoint's circuit moved to each state (open after consecutive failures, half_open to probe, closed again).",
      labelNames: [...labelNames, 'to'],
      registers,
      collect() {
        this.reset();
        each((labels, endpoint) => {
          for (const [to, count] of Object.entries(endpoint.transitions)) this.inc({ ...labels, to }, count);
        });
      },
    });
  }
}
