import type { SessionState, SignInRequest } from '#shared/api/admin.js';
import { request, send } from './client';

/**
 * Whether this browser is signed in to the companion's admin routes, and how the person at the
 * companion's machine runs Hearth's commands. Asking never answers 401: signed out is an answer.
 */
export function sessionState(signal?: AbortSignal): Promise<SessionState> {
  return request<SessionState>('/admin/session', { signal, cache: 'no-store' });
}

/**
 * Exchanges the one-time code of a sign-in link (opened at start, or from `hearth open`) for the
 * companion's admin session: an HttpOnly cookie this page never sees, which the browser sends
 * with the app's same-origin /admin requests from then on.
 */
export async function redeemSignIn(code: string, signal?: AbortSignal): Promise<void> {
  const body: SignInRequest = { code };
  const response = await send('/admin/session', { method: 'POST', body: JSON.stringify(body), signal });
  await response.body?.cancel();
}

/** Ends the admin session in this browser: the companion clears the session cookie. */
export async function endSession(): Promise<void> {
  const response = await send('/admin/session', { method: 'DELETE' });
  await response.body?.cancel();
}
