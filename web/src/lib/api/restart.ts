import type { RestartAnswer, ServerStatus } from '#shared/api/admin.js';
import { request } from './client';

/* Restarting the companion from the app (owner only): the request, and when the running companion finished starting. */

/** Asks the companion to stop as at Ctrl+C and start again in its terminal; it answers before it stops. */
export function restartCompanion(): Promise<RestartAnswer> {
  return request<RestartAnswer>('/admin/restart', { method: 'POST' });
}

/** When the companion answering now finished starting (a restarted one answers a later time); undefined while none answers. */
export async function companionStartedAt(signal?: AbortSignal): Promise<string | undefined> {
  try {
    return (await request<ServerStatus>('/admin/status', { cache: 'no-store', signal })).started_at;
  } catch {
    return undefined;
  }
}
