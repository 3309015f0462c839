import { redact } from '../redaction.js';
import type { Endpoint, Pool } from './pool.js';
import { endpoint as join, networkReason, reasonInWords } from './wire.js';

/**
 * Periodic health checks of a pool's endpoints: every `interval_seconds` while an endpoint's
 * circuit is closed, and one probe when an open circuit's wait is over (the wait doubles after
 * each failed probe). The check is `GET /health` on the endpoint's origin where the server has one
 * (llama-server, vLLM, LocalAI, Hearth), else `GET {url}/models`, the route every OpenAI-compatible
 * server has; `health.path` names another.
 */

/** What a check needs of the provider: the endpoint's base URL and headers (its key), and the secrets to keep out of messages. */
export type CheckTarget = (endpoint: Endpoint) => { base: URL; headers: Headers; secrets: string[] };

type Path = { kind: 'health' } | { kind: 'models' } | { kind: 'unknown' };

const MIN_TIMEOUT_MS = 2000;
const MAX_TIMEOUT_MS = 10_000;

export class HealthChecks {
  private readonly timers = new Map<Endpoint, NodeJS.Timeout>();
  private readonly paths = new WeakMap<Endpoint, Path>();
  /** Checks in flight: a second ask for the same endpoint waits for this one. */
  private readonly running = new Map<Endpoint, Promise<void>>();
  private stopped = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly pool: Pool,
    private readonly target: CheckTarget,
    private readonly fetchImpl: typeof fetch,
  ) {
    this.unsubscribe = pool.events.on('change', () => this.schedule());
  }

  /**
   * Plans checks after a change: a new endpoint is checked at once, an endpoint whose circuit just
   * opened when its wait is over; endpoints no longer in the pool are forgotten.
   */
  schedule(): void {
    if (this.stopped) return;
    for (const [endpoint, timer] of this.timers)
      if (!this.pool.endpoints.includes(endpoint)) {
        clearTimeout(timer);
        this.timers.delete(endpoint);
      }
    for (const endpoint of this.pool.endpoints) {
      if (!this.timers.has(endpoint)) this.plan(endpoint, 0);
      else if (endpoint.circuit === 'open' && !this.running.has(endpoint)) this.plan(endpoint);
    }
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /** Runs one check of an endpoint now (and plans the next); while one is in flight, its result. */
  check(endpoint: Endpoint): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const inFlight = this.running.get(endpoint);
    if (inFlight) return inFlight;
    const probe = endpoint.circuit === 'open' ? this.pool.probeDue(endpoint) : false;
    if (endpoint.circuit !== 'closed' && !probe) {
      this.plan(endpoint);
      return Promise.resolve();
    }
    const running = this.run(endpoint, probe);
    this.running.set(endpoint, running);
    return running;
  }

  private async run(endpoint: Endpoint, probe: boolean): Promise<void> {
    try {
      const failure = await this.ask(endpoint);
      if (this.stopped || !this.pool.endpoints.includes(endpoint)) return;
      if (failure === undefined) this.pool.succeeded(endpoint);
      else this.pool.failed(endpoint, failure);
    } finally {
      if (probe) this.pool.endProbe(endpoint);
      this.running.delete(endpoint);
      this.plan(endpoint);
    }
  }

  private plan(endpoint: Endpoint, soon?: number): void {
    if (this.stopped || !this.pool.endpoints.includes(endpoint)) return;
    clearTimeout(this.timers.get(endpoint));
    const delay = soon ?? (endpoint.circuit === 'closed' ? this.pool.health.intervalMs : Math.max(250, endpoint.openUntil - Date.now()));
    const timer = setTimeout(() => void this.check(endpoint), delay);
    timer.unref();
    this.timers.set(endpoint, timer);
  }

  /** undefined when the endpoint answered well; otherwise why not, in words without secrets. */
  private async ask(endpoint: Endpoint): Promise<string | undefined> {
    let target: ReturnType<CheckTarget>;
    try {
      target = this.target(endpoint);
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
    const configured = this.pool.health.path;
    const path: Path = configured ? { kind: 'health' } : (this.paths.get(endpoint) ?? { kind: 'unknown' });
    const healthUrl = onOrigin(configured ?? '/health', target.base);
    // The key goes with the check: never to a URL a path like `//host/x` turns into another origin.
    if (!healthUrl) return `its health.path ${JSON.stringify(configured)} is not a path on the endpoint's own origin; nothing was sent`;
    try {
      if (path.kind !== 'models') {
        const response = await this.get(healthUrl, target.headers);
        if (response.ok) {
          this.paths.set(endpoint, { kind: 'health' });
          return undefined;
        }
        // No /health here (404, 405, or a server that guards it): the OpenAI model list tells as much.
        const absent = !configured && path.kind === 'unknown' && response.status >= 400 && response.status < 500;
        if (!absent) return response.status === 503 ? 'not ready yet (503)' : `its health check answered with an error (${response.status})`;
        this.paths.set(endpoint, { kind: 'models' });
      }
      const models = join(target.base, '/models');
      const response = await this.get(models, target.headers);
      return response.ok ? undefined : `its model list answered with an error (${response.status})`;
    } catch (error) {
      return `not reachable (${reasonInWords(redact(networkReason(error), target.secrets))})`;
    }
  }

  private async get(url: URL, headers: Headers): Promise<Response> {
    const timeout = Math.min(MAX_TIMEOUT_MS, Math.max(MIN_TIMEOUT_MS, this.pool.health.intervalMs));
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${timeout / 1000} s`, 'TimeoutError')), timeout);
    try {
      const response = await this.fetchImpl(url, { headers, redirect: 'error', signal: controller.signal });
      await response.body?.cancel();
      return response;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** `path` on `base`'s origin, or undefined when it is not a plain path there (`//host/x`, `/\\host`, a full URL). */
function onOrigin(path: string, base: URL): URL | undefined {
  if (!/^\/(?![/\\])/.test(path)) return undefined;
  try {
    const url = new URL(path, base.origin);
    return url.origin === base.origin ? url : undefined;
  } catch {
    return undefined;
  }
}
