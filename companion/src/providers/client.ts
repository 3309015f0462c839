import type { ProviderStatus } from '#shared/api/admin.js';
import type { ProviderSettings } from '#shared/api/config.js';
import { HearthError } from '../errors.js';
import type { SecretAccess } from '../store/secrets.js';
import { redact, upstreamError } from './stream.js';
import { displayUrl, endpoint, networkReason, parseModelList, raceAbort, type ModelEntry } from './wire.js';

export { redact, rewriteModelJson, rewriteModelStream, upstreamError } from './stream.js';
export type { ProviderStatus };

/** One entry of the config document's `providers` section (companion -> model provider). */
export type ProviderConfig = Omit<ProviderSettings, 'api_key'> & { api_key?: string };

/** `secret:NAME` / `env:NAME` -> value, or undefined when not set. */
export type ResolveSecret = SecretAccess['resolve'];

export interface ProviderModel {
  /** `${provider}/${model}`: the id /v1/models shows and requests use. */
  id: string;
  provider: string;
  model: string;
  owned_by: string;
}

export type ForwardPath = '/chat/completions' | '/responses' | '/embeddings';

export const DEFAULT_TIMEOUT_MS = 600_000;
export const FIRST_BYTE_TIMEOUT_MS = 30_000;
export const LIST_CACHE_MS = 60_000;
/** An upstream error body is relayed up to this many characters. */
const MAX_ERROR_BODY = 65_536;

const REFERENCE = /^(secret|env):(.+)$/;

/** What a request to one provider needs: its URL, its headers, and the secrets to keep out of messages. */
interface Prepared {
  base: URL;
  headers: Headers;
  secrets: string[];
}

interface ProviderState {
  ok: boolean;
  error?: string;
  models: ProviderModel[];
}

/** The configured OpenAI-compatible model providers: listing, resolving ids, forwarding requests. */
export class ProviderClient {
  private readonly providers: ProviderConfig[];
  private readonly byName = new Map<string, ProviderConfig>();
  private readonly fetchImpl: typeof fetch;
  private readonly states = new Map<string, ProviderState>();
  private cache: { models: ProviderModel[]; expires: number } | undefined;
  private inflight: Promise<ProviderModel[]> | undefined;

  constructor(
    providers: ProviderConfig[],
    private readonly resolveSecret: ResolveSecret,
    fetchImpl?: typeof fetch,
  ) {
    this.providers = [];
    for (const provider of providers) {
      if (this.byName.has(provider.name)) continue;
      this.byName.set(provider.name, provider);
      this.providers.push(provider);
    }
    this.fetchImpl = fetchImpl ?? ((input, init) => fetch(input, init));
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
      const base = { name: provider.name, base_url: displayUrl(provider.base_url) };
      if (!state) return { ...base, ok: false, error: 'Not listed yet.', models: 0 };
      return { ...base, ok: state.ok, ...(state.error ? { error: state.error } : {}), models: state.models.length };
    });
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
   * POST {base_url}{path} with body.model set to the provider's own model name. The
   * upstream Response comes back as it is, error statuses included, except that an error's
   * body is redacted: a provider that echoes the request would show its key to the client.
   * Aborting `signal` aborts the upstream request, also while its body streams.
   */
  async forward(path: ForwardPath, modelId: string, body: Record<string, unknown>, signal: AbortSignal): Promise<Response> {
    const target = this.resolve(modelId);
    if (!target) throw new HearthError('model_not_found', `The model ${JSON.stringify(modelId)} does not exist.`, { param: 'model' });
    const prepared = this.prepare(target.provider);
    const headers = new Headers(prepared.headers);
    headers.set('content-type', 'application/json');
    const init: RequestInit = { method: 'POST', headers, body: JSON.stringify({ ...body, model: target.model }) };
    // A non-streaming answer's headers only arrive once generation is done, so only
    // streaming requests get the first-byte limit; the whole-request limit covers both.
    const streaming = body.stream === true;
    const response = await this.send(target.provider, prepared, endpoint(prepared.base, path), init, signal, streaming);
    if (response.ok) return response;
    const text = redact((await response.text().catch(() => '')).slice(0, MAX_ERROR_BODY), prepared.secrets);
    const relayed = new Headers(response.headers);
    relayed.delete('content-length');
    return new Response(text, { status: response.status, statusText: response.statusText, headers: relayed });
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
    const prepared = this.prepare(target.provider);
    const headers = new Headers(prepared.headers);
    let payload: BodyInit;
    if (body instanceof FormData) {
      body.set('model', target.model);
      payload = body;
    } else {
      headers.set('content-type', 'application/json');
      payload = JSON.stringify({ ...body, model: target.model });
    }
    const response = await this.send(target.provider, prepared, endpoint(prepared.base, path), { method: 'POST', headers, body: payload }, signal, false);
    if (!response.ok) throw await upstreamError(response, target.provider.name, prepared.secrets);
    try {
      return await response.json();
    } catch {
      throw new HearthError('provider_error', `Provider "${target.provider.name}" answered ${path} with something that is not JSON.`);
    }
  }

  /**
   * Any request to a configured provider's API with its credentials and time limits (hosted
   * media speaks its video-jobs API through this). Non-2xx answers come back as they are.
   */
  async request(name: string, path: string, init: RequestInit, signal?: AbortSignal): Promise<Response> {
    const provider = this.byName.get(name);
    if (!provider) throw new HearthError('provider_error', `No provider is named "${name}".`);
    const prepared = this.prepare(provider);
    const headers = new Headers(prepared.headers);
    new Headers(init.headers).forEach((value, key) => headers.set(key, value));
    const [pathname, query] = path.split('?', 2) as [string, string | undefined];
    const url = endpoint(prepared.base, pathname);
    if (query) url.search = query;
    return this.send(provider, prepared, url, { ...init, headers }, signal, false);
  }

  /** A provider's error answer as provider_error, without its secrets. */
  async failure(name: string, response: Response): Promise<HearthError> {
    const provider = this.byName.get(name);
    return upstreamError(response, name, provider ? this.prepare(provider).secrets : []);
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
      const prepared = this.prepare(provider);
      if (provider.models) return { ok: true, models: provider.models.map((id) => toModel({ id })) };
      const total = Math.min(provider.timeout_ms ?? DEFAULT_TIMEOUT_MS, FIRST_BYTE_TIMEOUT_MS);
      const response = await this.send(provider, prepared, endpoint(prepared.base, '/models'), { headers: prepared.headers }, undefined, true, total);
      if (!response.ok) throw await upstreamError(response, provider.name, prepared.secrets);
      let json: unknown;
      try {
        json = await response.json();
      } catch {
        json = undefined;
      }
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

  /** Resolves the provider's references into a URL and headers; a missing reference is a provider_error naming it. */
  private prepare(provider: ProviderConfig): Prepared {
    let base: URL;
    try {
      base = new URL(provider.base_url);
    } catch {
      throw new HearthError('provider_error', `Provider "${provider.name}" has an invalid base_url.`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new HearthError('provider_error', `Provider "${provider.name}" base_url must be http or https.`);
    }
    base.username = '';
    base.password = '';
    base.hash = '';
    const secrets: string[] = [];
    const headers = new Headers();
    const value = (field: string, raw: string, mustReference: boolean): string => {
      const match = REFERENCE.exec(raw);
      if (!match) {
        if (mustReference) throw new HearthError('provider_error', `Provider "${provider.name}" ${field} must be a reference (secret:NAME or env:NAME).`);
        return raw;
      }
      const resolved = this.resolveSecret(raw);
      if (resolved === undefined || resolved === '') {
        throw new HearthError('provider_error', `Provider "${provider.name}" ${field}: ${match[1]}:${match[2]} is not set.`);
      }
      secrets.push(resolved);
      return resolved;
    };
    for (const [name, raw] of Object.entries(provider.headers ?? {})) {
      const resolved = value(`header ${name}`, raw, false);
      try {
        headers.set(name, resolved);
      } catch {
        throw new HearthError('provider_error', `Provider "${provider.name}" header ${JSON.stringify(name)} is not a valid header.`);
      }
    }
    if (provider.api_key !== undefined) {
      const key = value('api_key', provider.api_key, true);
      try {
        headers.set('authorization', `Bearer ${key}`);
      } catch {
        throw new HearthError('provider_error', `Provider "${provider.name}" api_key is not valid in a header.`);
      }
    }
    // Compressed answers would be decoded by fetch while content-encoding stays in
    // the headers the route relays; asking for identity keeps them truthful.
    headers.set('accept-encoding', 'identity');
    return { base, headers, secrets };
  }

  /** fetch with the provider's limits; network failures and timeouts become provider_unreachable. */
  private async send(
    provider: ProviderConfig,
    prepared: Prepared,
    url: URL,
    init: RequestInit,
    signal: AbortSignal | undefined,
    firstByteLimit: boolean,
    totalMs = provider.timeout_ms ?? DEFAULT_TIMEOUT_MS,
  ): Promise<Response> {
    const host = prepared.base.host;
    if (signal?.aborted) throw signal.reason;
    // One controller per request rather than AbortSignal.any/timeout, whose Node
    // versions have had leaks and timeout signals collected before they fired.
    const controller = new AbortController();
    let expired: number | undefined;
    const expire = (ms: number): void => {
      if (controller.signal.aborted) return;
      expired = ms;
      controller.abort(new DOMException(`The provider did not answer within ${ms} ms.`, 'TimeoutError'));
    };
    const firstByteMs = Math.min(totalMs, FIRST_BYTE_TIMEOUT_MS);
    // The whole-request timer keeps running while the body streams; unref'd, it never holds the process open.
    const total = setTimeout(() => expire(totalMs), totalMs);
    total.unref();
    const firstByte = firstByteLimit ? setTimeout(() => expire(firstByteMs), firstByteMs) : undefined;
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      // No redirects: a redirect to another origin would carry the secret headers along.
      return await this.fetchImpl(url, { ...init, redirect: 'error', signal: controller.signal });
    } catch (error) {
      clearTimeout(total);
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) throw signal.reason;
      if (expired !== undefined) {
        const limit = expired < 1000 ? `${expired} ms` : `${Math.round(expired / 100) / 10} s`;
        throw new HearthError('provider_unreachable', `Provider "${provider.name}" (${host}) did not answer within ${limit}.`);
      }
      const reason = redact(networkReason(error), prepared.secrets);
      throw new HearthError('provider_unreachable', `Provider "${provider.name}" (${host}) could not be reached: ${reason}.`, { cause: reason });
    } finally {
      clearTimeout(firstByte);
    }
  }
}
