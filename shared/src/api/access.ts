/** Wire types of access keys (loopback-only /admin/keys routes). */

/** Route families a key may reach; admin routes are never reachable by key. */
export const ROUTE_SCOPES = ['inference', 'agents', 'tools', 'memory', 'images', 'metrics'] as const;
export type RouteScope = (typeof ROUTE_SCOPES)[number];

/**
 * The scopes a key gets when none are named: every API family. `metrics` (GET /metrics, for a
 * Prometheus server) is given only when asked for, so a monitoring key and an API key stay apart.
 */
export const DEFAULT_KEY_SCOPES: readonly RouteScope[] = ['inference', 'agents', 'tools', 'memory', 'images'];

export interface AccessKeyRecord {
  id: string;
  label: string;
  /** The first characters of the key, to recognise it. */
  prefix: string;
  /** The only agent this key may act for; null for any. */
  agent: string | null;
  scopes: RouteScope[];
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface CreateKeyRequest {
  label: string;
  agent?: string | null;
  scopes?: RouteScope[];
  /** ISO 8601 date-time, or use expires_in_days. */
  expires_at?: string | null;
  expires_in_days?: number | null;
}

/** The created key; `key` is shown this once and cannot be read back. */
export interface CreatedKey extends AccessKeyRecord {
  key: string;
}
