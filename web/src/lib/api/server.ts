import type { ClearedConversations, DraftCandidates, NativeBuildStatus, SavedConversations, ServerStatus } from '#shared/api/admin.js';
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

/** Forgets a failed native llama-server build and starts it again in the background. */
export function retryNativeBuild(): Promise<NativeBuildStatus> {
  return request<NativeBuildStatus>('/admin/engine/native-build', { method: 'POST' });
}

export function unloadModel(id: string): Promise<{ id: string; loaded: false; was_loaded: boolean }> {
  return request(`/admin/models/${encodeURIComponent(id)}/unload`, { method: 'POST' });
}

/** The conversations the llama-server engine saved to disk, and the disk each model may use for them. */
export function savedConversations(): Promise<SavedConversations> {
  return request<SavedConversations>('/admin/engine/conversations', { cache: 'no-store' });
}

/** Deletes every saved conversation (as `hearth engine cache clear` does). */
export function clearSavedConversations(): Promise<ClearedConversations> {
  return request<ClearedConversations>('/admin/engine/conversations', { method: 'DELETE' });
}

/** The installed models that could draft for a model, each checked against its vocabulary. */
export function draftCandidates(id: string, signal?: AbortSignal): Promise<DraftCandidates> {
  return request<DraftCandidates>(`/admin/models/${encodeURIComponent(id)}/drafts`, { cache: 'no-store', signal });
}
