import type { EndpointCircuit } from '#shared/api/admin.js';
import { Emitter } from '../emitter.js';
import type { Logger } from '../logger.js';
import { HealthChecks } from './health.js';
import { Pool, type Endpoint, type EndpointSpec } from './pool.js';
import { prepare, type ProviderConfig, type ResolveSecret } from './prepare.js';
import { endpointsOf, healthOf, isPool } from './settings.js';

/** What Hearth learns from provider answers, for GET /metrics (the metrics side implements it). */
export interface ProviderObserver {
  /** Seconds from sending a request to the first bytes of its streamed answer. */
  firstChunk(modelId: string, seconds: number): void;
  /** Token usage an answer reported. */
  usage(modelId: string, promptTokens: number, completionTokens: number): void;
  /** A stream broke after it began (a provider_interrupted error event was sent). */
  interrupted(modelId: string): void;
}

/** What the pools tell their listeners: the observer's three events, and every circuit move of every pool. */
export type PoolsEvents = {
  firstChunk: Parameters<ProviderObserver['firstChunk']>;
  usage: Parameters<ProviderObserver['usage']>;
  interrupted: Parameters<ProviderObserver['interrupted']>;
  circuit: [provider: string, endpoint: Endpoint, to: EndpointCircuit, from: EndpointCircuit];
};

/**
 * Every provider's pool, kept across configuration changes: an endpoint that stays (same URL)
 * keeps its circuit, its counts and the conversations it serves. Pools configured with
 * `endpoints` are health-checked in the background; a provider with a single `base_url` is a pool
 * of one that is never checked and never refused (it is tried for every request, as it always was).
 */
export class ProviderPools {
  private readonly pools = new Map<string, { pool: Pool; provider: ProviderConfig; checks?: HealthChecks }>();
  private closed = false;
  /** Any number of listeners: metrics observe answers (observe()), the log hears circuits, tests listen too. */
  readonly events = new Emitter<PoolsEvents>();

  constructor(
    private readonly resolveSecret: ResolveSecret,
    private readonly options: { fetch?: typeof fetch; checks?: boolean; log?: Pick<Logger, 'warn' | 'info'> } = {},
  ) {
    this.events.on('circuit', (name, endpoint, to, from) => this.report(name, endpoint, to, from));
  }

  /** Adds an observer of provider answers (GET /metrics); the function returned removes it. */
  observe(observer: ProviderObserver): () => void {
    const off = [
      this.events.on('firstChunk', (modelId, seconds) => observer.firstChunk(modelId, seconds)),
      this.events.on('usage', (modelId, prompt, completion) => observer.usage(modelId, prompt, completion)),
      this.events.on('interrupted', (modelId) => observer.interrupted(modelId)),
    ];
    return () => off.forEach((remove) => remove());
  }

  /** Puts a configuration's providers in force: pools are created, updated or dropped by name. */
  configure(providers: ProviderConfig[]): void {
    const names = new Set(providers.map((provider) => provider.name));
    for (const [name, entry] of this.pools)
      if (!names.has(name)) {
        entry.checks?.stop();
        this.pools.delete(name);
      }
    for (const provider of providers) this.update(provider);
  }

  /**
   * The provider's pool. The configuration put in force by configure() governs: a client still
   * holding an older configuration entry (a long agent run) gets the current pool, never its own.
   */
  pool(provider: ProviderConfig): Pool {
    return this.entry(provider).pool;
  }

  /** The pool and the configuration entry in force for it (its key and headers go to its endpoints). */
  entry(provider: ProviderConfig): { pool: Pool; provider: ProviderConfig } {
    if (!this.pools.has(provider.name)) this.update(provider);
    return this.pools.get(provider.name)!;
  }

  private update(provider: ProviderConfig): Pool {
    const specs = specsOf(provider);
    const health = healthOf(provider.health);
    const circuits = isPool(provider);
    let entry = this.pools.get(provider.name);
    if (!entry) {
      const pool = new Pool(provider.name, specs, health, circuits);
      pool.events.on('circuit', (endpoint, to, from) => this.events.emit('circuit', provider.name, endpoint, to, from));
      entry = { pool, provider };
      this.pools.set(provider.name, entry);
    } else {
      entry.pool.reconcile(specs, health, circuits);
      entry.provider = provider;
    }
    const wanted = circuits && this.options.checks !== false && !this.closed;
    if (wanted && !entry.checks) {
      const current = entry;
      entry.checks = new HealthChecks(entry.pool, (endpoint) => prepare(current.provider, endpoint.url, this.resolveSecret), this.fetchImpl);
    }
    if (!wanted && entry.checks) {
      entry.checks.stop();
      entry.checks = undefined;
    }
    entry.checks?.schedule();
    return entry.pool;
  }

  /** Every pool by provider name (for status and metrics). */
  list(): { name: string; pool: Pool }[] {
    return [...this.pools.entries()].map(([name, entry]) => ({ name, pool: entry.pool }));
  }

  /** Checks one provider's endpoints now (tests, and the app's "check now" would use it). */
  async checkNow(name: string): Promise<void> {
    const entry = this.pools.get(name);
    if (entry?.checks) await Promise.all(entry.pool.endpoints.map((endpoint) => entry.checks!.check(endpoint)));
  }

  /** An endpoint going down or coming back is worth a line in the log; a failed probe is not. */
  private report(name: string, endpoint: Endpoint, to: EndpointCircuit, from: EndpointCircuit): void {
    if (to === 'open' && from === 'closed')
      this.options.log?.warn(
        `Provider "${name}": ${endpoint.display} is down (${endpoint.lastError ?? 'failing'}); its requests go to the other endpoints until it answers again.`,
      );
    else if (to === 'closed') this.options.log?.info(`Provider "${name}": ${endpoint.display} answers again.`);
  }

  close(): void {
    this.closed = true;
    for (const entry of this.pools.values()) entry.checks?.stop();
  }

  private get fetchImpl(): typeof fetch {
    return this.options.fetch ?? ((input, init) => fetch(input, init));
  }
}

function specsOf(provider: ProviderConfig): EndpointSpec[] {
  return endpointsOf(provider).map((endpoint) => ({ url: endpoint.url, weight: endpoint.weight ?? 1, maxConcurrent: endpoint.max_concurrent ?? null }));
}
