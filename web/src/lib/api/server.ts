import type { ServerStatus } from '$shared/api/admin';
import type { HealthStatus } from '$shared/api/openai';
import { request } from './client';

export function health(signal?: AbortSignal): Promise<HealthStatus> {
  return request<HealthStatus>('/health', { signal, cache: 'no-store' });
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
