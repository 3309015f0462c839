import { createHash } from 'node:crypto';
import type { EndpointCircuit, ProviderEndpointStatus } from '#shared/api/admin.js';
import { Emitter } from '../emitter.js';
import { HearthError } from '../errors.js';
import { MAX_OPEN_MS, MAX_PAUSE_MS, type HealthSettings } from './settings.js';
import { displayUrl } from './wire.js';

/**
 * One provider's endpoints and the routing among them: least outstanding requests (relative to
 * weight) among endpoints that take requests, conversation affinity, and a circuit per endpoint
 * that opens after consecutive failures and lets one probe through once its wait is over. The
 * health checks that keep the circuits current live in health.ts; this file decides, it never
 * sends anything.
 */

export interface EndpointSpec {
  url: string;
  weight: number;
  maxConcurrent: number | null;
}

export class Endpoint {
  readonly display: string;
  outstanding = 0;
  /** Requests sent here since it was configured: breaks ties between idle endpoints, so sequential traffic spreads by weight. */
  served = 0;
  failovers = 0;
  consecutiveFailures = 0;
  circuit: EndpointCircuit = 'closed';
  /** When an open circuit may be probed (ms since the epoch). */
  openUntil = 0;
  /** The current wait of an open circuit; doubles after each failed probe. */
  openMs = 0;
  /** A probe (a health check or one request) is deciding a half-open circuit. */
  probing = false;
  /** Until when the endpoint asked not to be sent requests (its Retry-After). */
  retryAfterUntil = 0;
  lastError: string | undefined;
  /** How often the circuit moved into each state since Hearth started. */
  readonly transitions: Record<EndpointCircuit, number> = { closed: 0, open: 0, half_open: 0 };

  constructor(
    readonly url: string,
    public weight: number,
    public maxConcurrent: number | null,
  ) {
    this.display = displayUrl(url);
  }

  /** `move`: every move of the circuit (its pool passes it on as `circuit`; the log reports downs and recoveries). */
  readonly events = new Emitter<{ move: [to: EndpointCircuit, from: EndpointCircuit] }>();

  move(to: EndpointCircuit): void {
    const from = this.circuit;
    if (from === to) return;
    this.circuit = to;
    this.transitions[to]++;
    this.events.emit('move', to, from);
  }
}

export type PoolEvents = {
  change: [];
  circuit: [endpoint: Endpoint, to: EndpointCircuit, from: EndpointCircuit];
};

/** A request's hold on an endpoint: release it exactly once, when the answer is finished (or failed). */
export interface Lease {
  endpoint: Endpoint;
  /** This request decides a half-open circuit. */
  probe: boolean;
  release(): void;
}

/** Conversations remembered per pool (least recently used forgotten first). */
const AFFINITY_LIMIT = 10_000;

/** What a pool keeps of a conversation's key: a digest of fixed size, never the client's text. */
function digest(key: string): string {
  return createHash('sha256').update(key).digest('base64url');
}

export class Pool {
  endpoints: Endpoint[] = [];
  /** Digests of conversation keys -> the URL of the endpoint that served the conversation last. */
  private readonly affinity = new Map<string, string>();
  /**
   * `change`: a circuit opened or a probe is due sooner than planned (health.ts reschedules);
   * `circuit`: an endpoint's circuit moved (ProviderPools passes it on and logs it).
   */
  readonly events = new Emitter<PoolEvents>();

  constructor(
    readonly name: string,
    specs: EndpointSpec[],
    public health: HealthSettings,
    /** Pools configured with `endpoints` have circuits; a single `base_url` is always tried, as before pools. */
    public circuits: boolean,
    private readonly now: () => number = Date.now,
  ) {
    this.reconcile(specs, health, circuits);
  }

  /** New settings: endpoints that stay (same URL) keep their state; new ones start closed. */
  reconcile(specs: EndpointSpec[], health: HealthSettings, circuits: boolean): void {
    this.health = health;
    this.circuits = circuits;
    const previous = new Map(this.endpoints.map((endpoint) => [endpoint.url, endpoint]));
    this.endpoints = specs.map((spec) => {
      const kept = previous.get(spec.url);
      if (!kept) {
        // An endpoint belongs to one pool: it is heard from once, when it is made.
        const made = new Endpoint(spec.url, spec.weight, spec.maxConcurrent);
        made.events.on('move', (to, from) => this.events.emit('circuit', made, to, from));
        return made;
      }
      kept.weight = spec.weight;
      kept.maxConcurrent = spec.maxConcurrent;
      if (!circuits) kept.move('closed');
      return kept;
    });
    if (this.endpoints.length < 2) this.affinity.clear();
  }

  /**
   * The endpoint for the next attempt of a request, or why there is none. `tried` holds the
   * endpoints this request already failed on. The conversation's endpoint wins while it takes
   * requests; otherwise the one with the fewest outstanding requests for its weight.
   */
  choose(affinityKeys: readonly string[], tried: ReadonlySet<Endpoint>): Lease | HearthError {
    const now = this.now();
    const usable = this.endpoints.filter((endpoint) => !tried.has(endpoint) && this.takes(endpoint, now));
    if (usable.length === 0) return this.refusal(tried, now);
    const chosen = this.remembered(affinityKeys, usable) ?? leastLoaded(usable);
    return this.lease(chosen, now);
  }

  /** The first of the keys whose endpoint is among `usable` with its circuit closed. */
  private remembered(keys: readonly string[], usable: Endpoint[]): Endpoint | undefined {
    if (this.affinity.size === 0) return undefined;
    for (const key of keys) {
      const url = this.affinity.get(digest(key));
      const endpoint = url === undefined ? undefined : usable.find((entry) => entry.url === url && entry.circuit === 'closed');
      if (endpoint) return endpoint;
    }
    return undefined;
  }

  /** The endpoint answered (any status but 5xx and 429) or passed a check: its circuit closes, its failures and any pause are forgotten. */
  succeeded(endpoint: Endpoint): void {
    endpoint.consecutiveFailures = 0;
    endpoint.retryAfterUntil = 0;
    endpoint.lastError = undefined;
    endpoint.openMs = 0;
    endpoint.move('closed');
  }

  /** A connection error, a timeout, a 5xx, a failed check or a reply cut off: counts towards opening its circuit. */
  failed(endpoint: Endpoint, reason: string): void {
    endpoint.consecutiveFailures++;
    endpoint.lastError = reason;
    if (!this.circuits) return;
    const probeFailed = endpoint.circuit === 'half_open';
    if (!probeFailed && (endpoint.circuit === 'open' || endpoint.consecutiveFailures < this.health.failuresToOpen)) return;
    endpoint.openMs = probeFailed ? Math.min(MAX_OPEN_MS, Math.max(endpoint.openMs, this.health.openMs) * 2) : this.health.openMs;
    endpoint.openUntil = this.now() + endpoint.openMs;
    endpoint.move('open');
    this.events.emit('change');
  }

  /** A 429: the endpoint is well but asked for a pause; it gets no requests for `seconds`, at most MAX_PAUSE_MS. */
  rateLimited(endpoint: Endpoint, seconds: number): void {
    endpoint.retryAfterUntil = Math.max(endpoint.retryAfterUntil, this.now() + Math.min(seconds * 1000, MAX_PAUSE_MS));
  }

  /** The conversation continues where it was last served (a pool of one endpoint has nothing to choose, so remembers nothing). */
  remember(key: string, endpoint: Endpoint): void {
    if (this.endpoints.length < 2) return;
    const hashed = digest(key);
    this.affinity.delete(hashed);
    this.affinity.set(hashed, endpoint.url);
    if (this.affinity.size > AFFINITY_LIMIT) this.affinity.delete(this.affinity.keys().next().value!);
  }

  /** How many conversations the pool remembers. */
  conversations(): number {
    return this.affinity.size;
  }

  /** What the pool keeps of each remembered conversation: digests (status and tests read them). */
  rememberedKeys(): string[] {
    return [...this.affinity.keys()];
  }

  /** Whether another endpoint than those in `tried` would take a request now. */
  hasAlternative(tried: ReadonlySet<Endpoint>): boolean {
    const now = this.now();
    return this.endpoints.some((endpoint) => !tried.has(endpoint) && this.takes(endpoint, now));
  }

  /** Takes the half-open probe of an endpoint whose open circuit has waited long enough (health checks use it); false when not due. */
  probeDue(endpoint: Endpoint): boolean {
    if (endpoint.circuit !== 'open' || endpoint.probing || this.now() < endpoint.openUntil) return false;
    endpoint.probing = true;
    endpoint.move('half_open');
    return true;
  }

  /** Ends a probe taken with probeDue (or a probing request), whatever it found. */
  endProbe(endpoint: Endpoint): void {
    endpoint.probing = false;
  }

  status(): ProviderEndpointStatus[] {
    const now = this.now();
    return this.endpoints.map((endpoint) => {
      const waitUntil = endpoint.circuit === 'open' ? endpoint.openUntil : endpoint.retryAfterUntil;
      return {
        url: endpoint.display,
        circuit: endpoint.circuit,
        weight: endpoint.weight,
        max_concurrent: endpoint.maxConcurrent,
        outstanding: endpoint.outstanding,
        failovers: endpoint.failovers,
        consecutive_failures: endpoint.consecutiveFailures,
        ...(waitUntil > now ? { retry_in_seconds: Math.ceil((waitUntil - now) / 1000) } : {}),
        ...(endpoint.lastError ? { last_error: endpoint.lastError } : {}),
      };
    });
  }

  private takes(endpoint: Endpoint, now: number): boolean {
    if (!this.circuits) return true;
    if (now < endpoint.retryAfterUntil) return false;
    if (endpoint.maxConcurrent !== null && endpoint.outstanding >= endpoint.maxConcurrent) return false;
    if (endpoint.circuit === 'closed') return true;
    // An open circuit whose wait is over lets exactly one request through as its probe.
    return endpoint.circuit === 'open' && !endpoint.probing && now >= endpoint.openUntil;
  }

  private lease(endpoint: Endpoint, now: number): Lease {
    const probe = endpoint.circuit === 'open' && now >= endpoint.openUntil;
    if (probe) {
      endpoint.probing = true;
      endpoint.move('half_open');
    }
    endpoint.outstanding++;
    endpoint.served++;
    let released = false;
    return {
      endpoint,
      probe,
      release: () => {
        if (released) return;
        released = true;
        endpoint.outstanding--;
        if (probe) endpoint.probing = false;
      },
    };
  }

  private refusal(tried: ReadonlySet<Endpoint>, now: number): HearthError {
    const untried = this.endpoints.filter((endpoint) => !tried.has(endpoint));
    const wait = (until: number) => Math.max(1, Math.ceil((until - now) / 1000));
    const down = untried.filter((endpoint) => endpoint.circuit !== 'closed');
    if (untried.length > 0 && down.length === untried.length) {
      const soonest = Math.min(...down.map((endpoint) => endpoint.openUntil));
      return new HearthError(
        'provider_unavailable',
        `Every endpoint of provider "${this.name}" is down (${down.map((endpoint) => `${endpoint.display}: ${endpoint.lastError ?? 'failing'}`).join('; ')}). Hearth probes them again shortly; retry in ${wait(soonest)} s.`,
        { retryAfter: wait(soonest) },
      );
    }
    const limited = untried.filter((endpoint) => now < endpoint.retryAfterUntil);
    const soonest = limited.length > 0 ? Math.min(...limited.map((endpoint) => endpoint.retryAfterUntil)) : now + 1000;
    return new HearthError(
      'rate_limit_exceeded',
      limited.length > 0
        ? `Every endpoint of provider "${this.name}" is busy or asked for a pause; retry in ${wait(soonest)} s.`
        : `Every endpoint of provider "${this.name}" has as many requests as its max_concurrent allows; retry when one finishes.`,
      { retryAfter: wait(soonest) },
    );
  }
}

/** Fewest outstanding requests for the weight; then fewest served for the weight (spreads sequential traffic); then list order. */
function leastLoaded(endpoints: Endpoint[]): Endpoint {
  let best = endpoints[0]!;
  for (const endpoint of endpoints.slice(1)) {
    const load = (endpoint.outstanding + 1) / endpoint.weight - (best.outstanding + 1) / best.weight;
    if (load < -1e-9 || (Math.abs(load) <= 1e-9 && endpoint.served / endpoint.weight < best.served / best.weight - 1e-9)) best = endpoint;
  }
  return best;
}
