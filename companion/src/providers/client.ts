import type { ProviderStatus } from '#shared/api/admin.js';
import { HearthError } from '../errors.js';
import type { Endpoint, Pool } from './pool.js';
import { ProviderPools } from './pools.js';
import { prepare, requestHeaders, requestUrl, type Prepared, type ProviderConfig, type ResolveSecret } from './prepare.js';
import { LineTooLong } from '../line-buffer.js';
import { readAnswerJson } from './read-body.js';
import { relayResponse, type LineHook } from './relay.js';
import { DEFAULT_TIMEOUT_MS, FIRST_BYTE_TIMEOUT_MS, send } from './send.js';
import { endpointsOf } from './settings.js';
import { redact, relayedError, upstreamError } from './stream.js';
import { classifyAttempt, learn } from './verdict.js';
import { raceAbort } from '../abort.js';
import { displayUrl, networkReason, parseModelList, retryAfterSeconds, type ModelEntry } from './wire.js';

export { modelRewrite, redact, rewriteModelJson, rewriteModelStream, upstreamError } from './stream.js';
export type { ProviderConfig, ResolveSecret } from './prepare.js';
export type { ProviderStatus };

export interface ProviderModel {
  /** `${provider}/${model}`: the id /v1/models shows and requests use. */
  id: string;
  provider: string;
  model: string;
  owned_by: string;
}

export type ForwardPath = '/chat/completions' | '/completions' | '/responses' | '/embeddings';

export interface ForwardOptions {
  /**
   * The conversation this request continues, as keys in order of precedence (a Responses chain,
   * the agent or API conversation, the `user` field): it goes where the first known key was last
   * served while that endpoint takes requests, so the engine's prompt cache keeps working.
   */
  affinity?: string[];
  /** Hooks on the lines of a streamed answer (relay.ts): routes/openai/forward.ts rewrites the model id and captures the text. */
  hooks?: LineHook[];
}

export { DEFAULT_TIMEOUT_MS, FIRST_BYTE_TIMEOUT_MS };
export const LIST_CACHE_MS = 60_000;

interface ProviderState {
  ok: boolean;
  error?: string;
  models: ProviderModel[];
}

/** One request sent to an endpoint that answered: the answer, the endpoint and its pool, and how it was sent. */
interface Sent {
  response: Response;
  endpoint: Endpoint;
  pool: Pool;
  prepared: Prepared;
}

/**
 * What a use of an answer made of it, and what keeps the endpoint busy after it: a streamed
 * answer holds its endpoint until `keep` settles (its body ended, broke or was cancelled).
 */
interface Used<T> {
  value: T;
  keep?: Promise<void>;
}

interface AttemptOptions {
  /** Only streaming answers get the first-byte limit (a non-streaming answer's headers come when it is done). */
  firstByteLimit: boolean;
  totalMs?: number;
  affinity?: readonly string[];
  /** Move the request to another endpoint after a connection error, a timeout, a 5xx or a 429 before the first byte. */
  failover: boolean;
}

/**
 * The configured OpenAI-compatible model providers: listing, resolving ids, forwarding requests.
 * Each provider is a pool of endpoints (one for `base_url`): a request goes to the endpoint its
 * conversation used last, else to the least loaded one, and moves to another when an endpoint
 * fails before answering.
 */
export class ProviderClient {
  private readonly providers: ProviderConfig[];
  private readonly byName = new Map<string, ProviderConfig>();
  private readonly fetchImpl: typeof fetch;
  private readonly pools: ProviderPools;
  private readonly states = new Map<string, ProviderState>();
  private cache: { models: ProviderModel[]; expires: number } | undefined;
  private inflight: Promise<ProviderModel[]> | undefined;

  /**
   * `pools`, when given, is the process's long-lived set (configured and health-checked by its
   * owner); otherwise the client keeps its own, without background checks.
   */
  constructor(
    providers: ProviderConfig[],
    private readonly resolveSecret: ResolveSecret,
    fetchImpl?: typeof fetch,
    pools?: ProviderPools,
  ) {
    this.providers = [];
    for (const provider of providers) {
      if (this.byName.has(provider.name)) continue;
      this.byName.set(provider.name, provider);
      this.providers.push(provider);
    }
    this.fetchImpl = fetchImpl ?? ((input, init) => fetch(input, init));
    this.pools = pools ?? new ProviderPools(resolveSecret, { fetch: this.fetchImpl, checks: false });
    if (!pools) this.pools.configure(this.providers);
  }

  /** Listed models of every provider; a provider that fails is skipped (see status()). Cached for 60 s. */
  async listModels(signal?: AbortSignal): Promise<ProviderModel[]> {
    if (this.cache && Date.now() < this.cache.expires) return this.cache.models;
    if (!this.inflight) {
      this.inflight = this.refresh().finally(() => {
        this.inflight = undefined;
      });
    }
    return raceAbort(this.inflight, signal);
  }

  status(): ProviderStatus[] {
    return this.providers.map((provider) => {
      const state = this.states.get(provider.name);
      const first = endpointsOf(provider)[0]?.url;
      const endpoints = this.pools.pool(provider).status();
      const base = { name: provider.name, base_url: first ? displayUrl(first) : '', endpoints };
      if (!state) return { ...base, ok: false, error: 'Not listed yet.', models: 0 };
      return { ...base, ok: state.ok, ...(state.error ? { error: state.error } : {}), models: state.models.length };
    });
  }

  /**
   * For `<provider>/<model>` of a configured provider: whether the configuration names the model
   * or the provider listed it when last asked (a provider may answer for names it never listed);
   * undefined for any other id.
   */
  modelListed(modelId: string): boolean | undefined {
    const target = this.resolve(modelId);
    if (!target) return undefined;
    const { provider, model } = target;
    if (provider.models?.includes(model) || provider.image_models?.includes(model)) return true;
    return this.states.get(provider.name)?.models.some((entry) => entry.model === model) ?? false;
  }

  /** `<provider>/<model>` of a configured provider -> target; anything else (bare local ids included) -> null. */
  resolve(modelId: string): { provider: ProviderConfig; model: string } | null {
    const slash = modelId.indexOf('/');
    if (slash <= 0) return null;
    const provider = this.byName.get(modelId.slice(0, slash));
    const model = modelId.slice(slash + 1);
    if (!provider || !model) return null;
    return { provider, model };
  }

  /**
   * POST {endpoint}{path} with body.model set to the provider's own model name. The upstream
   * Response comes back as it is, except that an error answer becomes its status and its redacted
   * message (relayedErrorBody): a provider that echoes the request would show its key to the
   * client. A stream that breaks after it began (or sends a line past MAX_LINE_BYTES) ends with
   * one error event (provider_interrupted), never a silent retry. Aborting `signal` aborts the
   * upstream request, also while its body streams.
   */
  async forward(path: ForwardPath, modelId: string, body: Record<string, unknown>, signal: AbortSignal, options: ForwardOptions = {}): Promise<Response> {
    const target = this.resolve(modelId);
    if (!target) throw new HearthError('model_not_found', `The model ${JSON.stringify(modelId)} does not exist.`, { param: 'model' });
    const init: RequestInit = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, model: target.model }) };
    const streaming = body.stream === true;
    const affinity = options.affinity ?? [];
    const sentAt = performance.now();
    const name = target.provider.name;
    const events = this.pools.events;
    return this.attempt(target.provider, path, init, signal, { firstByteLimit: streaming, affinity, failover: true }, async (sent) => {
      const { response, endpoint: chosen, pool } = sent;
      if (!response.ok) return { value: await relayedError(response, sent.prepared.secrets) };
      for (const key of affinity) pool.remember(key, chosen);
      let settled!: () => void;
      const keep = new Promise<void>((resolve) => (settled = resolve));
      const value = relayResponse(response, {
        responses: path === '/responses',
        hooks: options.hooks,
        interrupted: (reason) =>
          new HearthError(
            'provider_interrupted',
            reason instanceof LineTooLong
              ? `Hearth stopped reading provider "${name}" (${chosen.display}): ${reason.message}; the reply is incomplete and was not retried.`
              : `Provider "${name}" (${chosen.display}) stopped answering after its reply had begun (${redact(networkReason(reason), sent.prepared.secrets)}); the reply is incomplete and was not retried.`,
          ),
        clientGone: () => signal.aborted,
        onFirstChunk: streaming ? () => events.emit('firstChunk', modelId, (performance.now() - sentAt) / 1000) : undefined,
        onSettle: (outcome, tap) => {
          settled();
          if (outcome === 'broken') {
            learn(pool, chosen, classifyAttempt({ kind: 'cut_off' }, false).endpoint);
            events.emit('interrupted', modelId);
          }
          if (outcome === 'completed' && tap.responseId) pool.remember(`response:${tap.responseId}`, chosen);
          if (tap.promptTokens !== undefined || tap.completionTokens !== undefined)
            events.emit('usage', modelId, tap.promptTokens ?? 0, tap.completionTokens ?? 0);
        },
      });
      return { value, keep };
    });
  }

  /**
   * One of a provider's OpenAI Images routes (generations as JSON, edits as multipart) with the
   * model set to the provider's own name; resolves with the answer's JSON, or throws
   * provider_error / provider_unreachable without any secret in the message.
   */
  async images(
    path: '/images/generations' | '/images/edits',
    modelId: string,
    body: Record<string, unknown> | FormData,
    signal: AbortSignal,
  ): Promise<unknown> {
    const target = this.resolve(modelId);
    if (!target) throw new HearthError('model_not_found', `The model ${JSON.stringify(modelId)} does not exist.`, { param: 'model' });
    let init: RequestInit;
    if (body instanceof FormData) {
      body.set('model', target.model);
      init = { method: 'POST', body };
    } else init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, model: target.model }) };
    return this.attempt(target.provider, path, init, signal, { firstByteLimit: false, failover: true }, async ({ response, prepared }) => {
      if (!response.ok) throw await upstreamError(response, target.provider.name, prepared.secrets);
      const json = await readAnswerJson(response, target.provider.name);
      if (json === undefined) throw new HearthError('provider_error', `Provider "${target.provider.name}" answered ${path} with something that is not JSON.`);
      return { value: json };
    });
  }

  /**
   * Any request to a configured provider's API with its credentials and time limits (hosted
   * media speaks its video-jobs API through this). Non-2xx answers come back as they are. Never
   * moved to another endpoint: a job made on one server is followed on that server.
   */
  async request(name: string, path: string, init: RequestInit, signal?: AbortSignal): Promise<Response> {
    const provider = this.byName.get(name);
    if (!provider) throw new HearthError('provider_error', `No provider is named "${name}".`);
    // The endpoint is free once the answer's headers came: the caller reads the body (a job's status, a video) on its own time.
    return this.attempt(provider, path, init, signal, { firstByteLimit: false, failover: false }, async ({ response }) => ({ value: response }));
  }

  /** A provider's error answer as provider_error, without its secrets. */
  async failure(name: string, response: Response): Promise<HearthError> {
    const provider = this.byName.get(name);
    let secrets: string[] = [];
    const first = provider ? endpointsOf(provider)[0] : undefined;
    try {
      if (provider && first) secrets = prepare(provider, first.url, this.resolveSecret).secrets;
    } catch {
      // an unresolvable reference: the message has nothing of it to hide
    }
    return upstreamError(response, name, secrets);
  }

  private async refresh(): Promise<ProviderModel[]> {
    const results = await Promise.all(this.providers.map((provider) => this.listProvider(provider)));
    const models: ProviderModel[] = [];
    this.providers.forEach((provider, index) => {
      const state = results[index]!;
      this.states.set(provider.name, state);
      models.push(...state.models);
    });
    this.cache = { models, expires: Date.now() + LIST_CACHE_MS };
    return models;
  }

  private async listProvider(provider: ProviderConfig): Promise<ProviderState> {
    const toModel = (entry: ModelEntry): ProviderModel => ({
      id: `${provider.name}/${entry.id}`,
      provider: provider.name,
      model: entry.id,
      owned_by: entry.owned_by ?? provider.name,
    });
    try {
      if (provider.models) {
        for (const entry of endpointsOf(provider)) prepare(provider, entry.url, this.resolveSecret);
        return { ok: true, models: provider.models.map((id) => toModel({ id })) };
      }
      const totalMs = Math.min(provider.timeout_ms ?? DEFAULT_TIMEOUT_MS, FIRST_BYTE_TIMEOUT_MS);
      const json = await this.attempt(
        provider,
        '/models',
        { method: 'GET' },
        undefined,
        { firstByteLimit: true, totalMs, failover: true },
        async ({ response, prepared }) => {
          if (!response.ok) throw await upstreamError(response, provider.name, prepared.secrets);
          return { value: await readAnswerJson(response, provider.name) };
        },
      );
      const entries = parseModelList(json);
      if (!entries) {
        throw new HearthError('provider_error', `Provider "${provider.name}" did not answer GET /models with a model list.`);
      }
      const seen = new Set<string>();
      const unique = entries.filter((entry) => !seen.has(entry.id) && seen.add(entry.id));
      return { ok: true, models: unique.map(toModel) };
    } catch (error) {
      const message = error instanceof HearthError ? error.message : `Provider "${provider.name}" could not be listed.`;
      return { ok: false, error: message, models: [] };
    }
  }

  /**
   * Sends one request to the provider: to an endpoint of its pool, and with `failover` to the
   * next one when an endpoint fails before answering (verdict.ts decides: a connection error, a
   * timeout, a 5xx, or a 429 whose Retry-After keeps the endpoint out for that long). The last
   * endpoint's answer goes to `use` as it is; when none could be reached, provider_unreachable
   * says why for each. Each attempt holds its endpoint from choosing it to the one `finally`
   * below: at once when `use` is done, or when what `use` keeps (a streamed answer) settles.
   */
  private async attempt<T>(
    target: ProviderConfig,
    path: string,
    init: RequestInit,
    signal: AbortSignal | undefined,
    options: AttemptOptions,
    use: (sent: Sent) => Promise<Used<T>>,
  ): Promise<T> {
    const { pool, provider } = this.pools.entry(target);
    const tried = new Set<Endpoint>();
    const failures: string[] = [];
    let last: HearthError | undefined;
    let moved: Endpoint | undefined;
    const canMove = () => options.failover && pool.hasAlternative(tried);
    for (;;) {
      const lease = pool.choose(options.affinity ?? [], tried);
      if (lease instanceof HearthError) throw last ?? lease;
      if (moved) moved.failovers++;
      const chosen = lease.endpoint;
      tried.add(chosen);
      let keep: Promise<void> | undefined;
      try {
        const prepared = prepare(provider, chosen.url, this.resolveSecret);
        let response: Response;
        try {
          response = await send(
            this.fetchImpl,
            provider,
            prepared,
            requestUrl(prepared, path),
            { ...init, headers: requestHeaders(prepared, init) },
            signal,
            options.firstByteLimit,
            options.totalMs,
          );
        } catch (error) {
          if (signal?.aborted || !(error instanceof HearthError)) {
            learn(pool, chosen, classifyAttempt({ kind: 'aborted' }, false).endpoint);
            throw error;
          }
          const verdict = classifyAttempt({ kind: 'unreachable', reason: String(error.cause ?? 'no answer in time') }, canMove());
          learn(pool, chosen, verdict.endpoint);
          failures.push(`${chosen.display}: ${String(error.cause ?? error.message)}`);
          last =
            failures.length > 1
              ? new HearthError('provider_unreachable', `Provider "${provider.name}": no endpoint could be reached (${failures.join('; ')}).`)
              : error;
          if (verdict.action === 'give_up') throw last;
          moved = chosen;
          continue;
        }
        const verdict = classifyAttempt(
          { kind: 'answered', status: response.status, retryAfter: retryAfterSeconds(response.headers.get('retry-after')) },
          canMove(),
        );
        learn(pool, chosen, verdict.endpoint);
        if (verdict.action === 'failover') {
          await response.body?.cancel().catch(() => undefined);
          moved = chosen;
          continue;
        }
        const used = await use({ response, endpoint: chosen, pool, prepared });
        keep = used.keep;
        return used.value;
      } finally {
        // The one release of this attempt's hold, whichever way it ended.
        if (keep) void keep.finally(() => lease.release());
        else lease.release();
      }
    }
  }
}
