import type { ConfigDocument } from '#shared/api/config.js';
import { endpointsOf } from '../providers/settings.js';

const REFERENCE = /^(secret|env):[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Where each secret reference is sent: `secret:NAME -> https://host:port` for every provider (each endpoint of a pool),
 * hosted media endpoint, HTTP MCP service, cloud workspace issuer and paired host that carries it.
 * Comparing these sets before and after a change shows a secret re-pointed at a new host.
 */
export function secretDestinations(document: ConfigDocument): Set<string> {
  const pairs = new Set<string>();
  const add = (url: string | undefined, values: unknown[]) => {
    const origin = originOf(url);
    if (!origin) return;
    for (const value of values) if (typeof value === 'string' && REFERENCE.test(value)) pairs.add(`${value} -> ${origin}`);
  };
  // Every endpoint of a pool is sent the provider's key and headers: a new endpoint is a new host for them.
  for (const provider of document.providers)
    for (const endpoint of endpointsOf(provider)) add(endpoint.url, [provider.api_key, ...Object.values(provider.headers ?? {})]);
  for (const media of document.media_providers ?? []) add(media.base_url, [media.api_key, ...Object.values(media.headers ?? {})]);
  for (const service of document.mcp_services) {
    if (service.transport !== 'http') continue;
    const auth = service.auth as { token?: string; headers?: Record<string, string>; client_secret?: string };
    add(service.url, [auth.token, auth.client_secret, ...Object.values(auth.headers ?? {})]);
  }
  // A workspace's client secret goes to its issuer; a paired host's device key signs for its address.
  for (const workspace of document.cloud_workspaces ?? []) add(workspace.issuer, [workspace.client_secret]);
  for (const host of document.remote_hosts ?? []) add(host.url, [host.credential]);
  return pairs;
}

/**
 * Where each cloud workspace's sign-in (its access token) is sent: the origins of its agent cards
 * and of its directory (CloudAgents.authorizedFetch sends it there and nowhere else). The token is
 * not a secret reference in the document, so it is tracked per workspace name.
 */
export function signInDestinations(document: ConfigDocument): Map<string, Set<string>> {
  const destinations = new Map<string, Set<string>>();
  for (const workspace of document.cloud_workspaces ?? []) {
    const origins = [...workspace.agent_cards, ...(workspace.directory ? [workspace.directory] : [])].map(originOf);
    destinations.set(workspace.name, new Set(origins.filter((origin): origin is string => origin !== undefined)));
  }
  return destinations;
}

/** Every secret:/env: reference anywhere in a document. */
export function referencesIn(value: unknown, found = new Set<string>()): Set<string> {
  if (typeof value === 'string' && REFERENCE.test(value)) found.add(value);
  else if (Array.isArray(value)) for (const item of value) referencesIn(item, found);
  else if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) referencesIn(item, found);
  return found;
}

/** Problems with URLs that would carry credentials: user:password@ stays in the config file and its exports. */
export function credentialsInUrls(document: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const check = (path: string, url: unknown) => {
    if (typeof url !== 'string') return;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return;
    }
    if (parsed.username || parsed.password)
      problems.push(`${path}: must not contain user:password@ or another credential; put the key in api_key (or headers) as a secret: reference`);
  };
  const providers = Array.isArray(document.providers) ? (document.providers as { base_url?: unknown; endpoints?: unknown }[]) : [];
  providers.forEach((provider, index) => {
    check(`providers[${index}].base_url`, provider?.base_url);
    const endpoints = Array.isArray(provider?.endpoints) ? (provider.endpoints as { url?: unknown }[]) : [];
    endpoints.forEach((endpoint, position) => check(`providers[${index}].endpoints[${position}].url`, endpoint?.url));
  });
  const media = Array.isArray(document.media_providers) ? (document.media_providers as { base_url?: unknown }[]) : [];
  media.forEach((provider, index) => check(`media_providers[${index}].base_url`, provider?.base_url));
  return problems;
}

function originOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}
