import type { SessionsEnded, SessionState, SignInRequest, SignInResult } from '#shared/api/admin.js';
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
 * companion's admin session: an HttpOnly cookie this page never sees, and the proof this page
 * keeps and sends with every admin request.
 */
export function redeemSignIn(code: string, signal?: AbortSignal): Promise<SignInResult> {
  const body: SignInRequest = { code };
  return request<SignInResult>('/admin/session', { method: 'POST', body: JSON.stringify(body), signal });
}

/** Ends the admin session of this browser for good: the companion forgets it and clears the cookie. */
export async function endSession(): Promise<void> {
  const response = await send('/admin/session', { method: 'DELETE' });
  await response.body?.cancel();
}

/** Ends the admin session of every browser, this one's included. */
export function endEverySession(): Promise<SessionsEnded> {
  return request<SessionsEnded>('/admin/sessions', { method: 'DELETE' });
}
