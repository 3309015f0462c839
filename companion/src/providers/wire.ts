import { isObject } from '../json.js';
/** Small helpers of client.ts: model-list parsing, URLs, failure reasons, abort races. */

export interface ModelEntry {
  id: string;
  owned_by?: string;
}

/** Accepts OpenAI's `{data:[{id}]}` and the common variants (a bare array, `{models:[{name}]}`). */
export function parseModelList(json: unknown): ModelEntry[] | null {
  const list = Array.isArray(json) ? json : isObject(json) ? (json.data ?? json.models) : undefined;
  if (!Array.isArray(list)) return null;
  const entries: ModelEntry[] = [];
  for (const item of list) {
    if (typeof item === 'string') entries.push({ id: item });
    else if (isObject(item)) {
      const id = typeof item.id === 'string' ? item.id : typeof item.name === 'string' ? item.name : undefined;
      if (id) entries.push({ id, owned_by: typeof item.owned_by === 'string' ? item.owned_by : undefined });
    }
  }
  return entries;
}

/** A short reason for a failed fetch (ECONNREFUSED, ENOTFOUND, ...) without request details. */
export function networkReason(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause && typeof cause === 'object') {
    const { code, message } = cause as { code?: unknown; message?: unknown };
    if (typeof code === 'string') return code;
    if (typeof message === 'string') return message;
  }
  return error instanceof Error ? error.message : String(error);
}

export function displayUrl(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
  } catch {
    return '(invalid URL)';
  }
}

/** `{base}{path}`, keeping the base's own path prefix and query. */
export function endpoint(base: URL, path: string): URL {
  const url = new URL(base.href);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
  return url;
}

/** A Retry-After header in seconds (delta-seconds or an HTTP date), capped at an hour; undefined when absent or unreadable. */
export function retryAfterSeconds(header: string | null): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const trimmed = header.trim();
  const seconds = /^\d+$/.test(trimmed) ? Number(trimmed) : (Date.parse(trimmed) - Date.now()) / 1000;
  if (!Number.isFinite(seconds)) return undefined;
  return Math.min(3600, Math.max(0, Math.ceil(seconds)));
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'timed out',
  UND_ERR_CONNECT_TIMEOUT: 'timed out connecting',
  UND_ERR_SOCKET: 'connection closed',
};

/** A failure reason (`ECONNREFUSED`, …) in words a person reads on the Server screen. */
export function reasonInWords(reason: string): string {
  return REASONS[reason] ?? reason;
}
