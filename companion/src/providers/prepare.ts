import type { SecretAccess } from '../store/secrets.js';
import type { ProviderSettings } from '#shared/api/config.js';
import { HearthError } from '../errors.js';
import { endpoint } from './wire.js';

/** `secret:NAME` / `env:NAME` -> value, or undefined when not set. */
export type ResolveSecret = SecretAccess['resolve'];

/** One entry of the config document's `providers` section (companion -> model provider). */
export type ProviderConfig = Omit<ProviderSettings, 'api_key'> & { api_key?: string };

/** What a request to one provider endpoint needs: its URL, its headers, and the secrets to keep out of messages. */
export interface Prepared {
  base: URL;
  headers: Headers;
  secrets: string[];
}

const REFERENCE = /^(secret|env):(.+)$/;

/**
 * Resolves a provider's references into the base URL of one of its endpoints and the headers every
 * request carries (its key, its own headers); a missing reference is a provider_error naming it.
 */
export function prepare(provider: ProviderConfig, url: string, resolveSecret: ResolveSecret): Prepared {
  const field = provider.endpoints ? 'endpoint url' : 'base_url';
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    throw new HearthError('provider_error', `Provider "${provider.name}" has an invalid ${field}.`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new HearthError('provider_error', `Provider "${provider.name}" ${field} must be http or https.`);
  }
  base.username = '';
  base.password = '';
  base.hash = '';
  const secrets: string[] = [];
  const headers = new Headers();
  const value = (name: string, raw: string, mustReference: boolean): string => {
    const match = REFERENCE.exec(raw);
    if (!match) {
      if (mustReference) throw new HearthError('provider_error', `Provider "${provider.name}" ${name} must be a reference (secret:NAME or env:NAME).`);
      return raw;
    }
    const resolved = resolveSecret(raw);
    if (resolved === undefined || resolved === '') {
      throw new HearthError('provider_error', `Provider "${provider.name}" ${name}: ${match[1]}:${match[2]} is not set.`);
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

/** `{base}{path}` for a prepared endpoint; `path` may carry a query (`/videos?limit=5`). */
export function requestUrl(prepared: Prepared, path: string): URL {
  const [pathname, query] = path.split('?', 2) as [string, string | undefined];
  const url = endpoint(prepared.base, pathname);
  if (query) url.search = query;
  return url;
}

/** The endpoint's headers (its key, its configured headers), with the request's own on top. */
export function requestHeaders(prepared: Prepared, init: RequestInit): Headers {
  const headers = new Headers(prepared.headers);
  new Headers(init.headers).forEach((value, key) => headers.set(key, value));
  return headers;
}
