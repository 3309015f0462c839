import type { ProviderEndpoint, ProviderHealthSettings, ProviderSettings } from '#shared/api/config.js';

/**
 * A provider is one server (`base_url`) or a pool of them (`endpoints`). This file holds what the
 * configuration schema cannot say about that, and the one reading of it the rest of the code uses.
 */

/** Health-check settings with their defaults filled in. */
export interface HealthSettings {
  /** A path on each endpoint's origin; undefined: `/health` where the server has one, else `GET {url}/models`. */
  path: string | undefined;
  intervalMs: number;
  failuresToOpen: number;
  openMs: number;
}

export const DEFAULT_HEALTH = { interval_seconds: 10, failures_to_open: 3, open_seconds: 2 } as const;
/** An open circuit's wait doubles after each failed probe up to this. */
export const MAX_OPEN_MS = 60_000;
/**
 * The longest pause a 429's Retry-After buys: one answer must not shut an endpoint for an hour.
 * Five minutes covers the per-minute windows of rate limits; a passing health check ends it sooner.
 */
export const MAX_PAUSE_MS = 300_000;

/** The endpoints of a provider: its `endpoints`, or `base_url` as a pool of one. */
export function endpointsOf(provider: Pick<ProviderSettings, 'base_url' | 'endpoints'>): ProviderEndpoint[] {
  if (provider.endpoints && provider.endpoints.length > 0) return provider.endpoints;
  return provider.base_url ? [{ url: provider.base_url }] : [];
}

/** Whether the provider was configured as a pool (`endpoints`): only pools are checked periodically and have circuits. */
export function isPool(provider: Pick<ProviderSettings, 'endpoints'>): boolean {
  return (provider.endpoints?.length ?? 0) > 0;
}

export function healthOf(settings: ProviderHealthSettings | undefined): HealthSettings {
  return {
    path: settings?.path,
    intervalMs: (settings?.interval_seconds ?? DEFAULT_HEALTH.interval_seconds) * 1000,
    failuresToOpen: settings?.failures_to_open ?? DEFAULT_HEALTH.failures_to_open,
    openMs: (settings?.open_seconds ?? DEFAULT_HEALTH.open_seconds) * 1000,
  };
}

/**
 * Checks the schema cannot express: each provider has `base_url` or `endpoints` (not both), and a
 * pool names each server once (the same origin and path twice would count its load twice).
 */
export function checkProviders(providers: unknown): string[] {
  if (!Array.isArray(providers)) return [];
  const problems: string[] = [];
  providers.forEach((provider: Partial<ProviderSettings> | null, index) => {
    if (typeof provider !== 'object' || provider === null) return;
    const hasBase = provider.base_url !== undefined;
    const hasEndpoints = provider.endpoints !== undefined;
    if (!hasBase && !hasEndpoints) problems.push(`providers[${index}]: needs base_url (one server) or endpoints (a pool of servers serving the same models)`);
    if (hasBase && hasEndpoints)
      problems.push(`providers[${index}].endpoints: give base_url or endpoints, not both (a single server is an endpoints list of one)`);
    if (provider.health !== undefined && !hasEndpoints)
      problems.push(`providers[${index}].health: applies only to a pool; list the server under endpoints to have it checked`);
    if (!Array.isArray(provider.endpoints)) return;
    const seen = new Map<string, number>();
    provider.endpoints.forEach((endpoint, position) => {
      const key = normalisedUrl(endpoint?.url);
      if (key === undefined) return;
      const first = seen.get(key);
      if (first !== undefined) problems.push(`providers[${index}].endpoints[${position}].url: the same server as endpoints[${first}]; list each server once`);
      else seen.set(key, position);
    });
  });
  return problems;
}

function normalisedUrl(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
  } catch {
    return undefined;
  }
}
