import type { ServerStatus } from '#shared/api/admin.js';
import type { HealthStatus } from '#shared/api/openai.js';
import { request, send } from './client';

export function health(signal?: AbortSignal): Promise<HealthStatus> {
  return request<HealthStatus>('/health', { signal, cache: 'no-store' });
}

/**
 * Asks the API (not `/health`, which needs no key) whether it lets this browser in, with the
 * saved key if there is one: rejects with 401 `invalid_api_key` when a key is needed or refused.
 */
export async function probeApi(signal?: AbortSignal): Promise<void> {
  const response = await send('/v1/models', { signal, cache: 'no-store' });
  await response.body?.cancel();
}

/** Checks a pasted key before it is saved: rejects with the companion's error when it does not open the chat API. */
export async function verifyKey(key: string, signal?: AbortSignal): Promise<void> {
  const response = await send('/v1/models', { signal, cache: 'no-store', headers: { authorization: `Bearer ${key}` } });
  await response.body?.cancel();
}

/** Loopback-only: address, folders and loaded models of the companion. */
export function serverStatus(): Promise<ServerStatus> {
  return request<ServerStatus>('/admin/status', { cache: 'no-store' });
}

export function loadModel(id: string): Promise<{ id: string; loaded: true }> {
  return request(`/admin/models/${encodeURIComponent(id)}/load`, { method: 'POST' });
}

export function unloadModel(id: string): Promise<{ id: string; loaded: false; was_loaded: boolean }> {
  return request(`/admin/models/${encodeURIComponent(id)}/unload`, { method: 'POST' });
}
