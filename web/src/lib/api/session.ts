import type {
  SessionsEnded,
  SessionState,
  SignInAnswer,
  SignInAnswerRequest,
  SignInApproval,
  SignInAsk,
  SignInRequest,
  SignInResult,
  WaitingSignIns,
} from '#shared/api/admin.js';
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

/** Asks a signed-in browser on this machine to let this one in: the code to show, and the secret to ask for the answer with. */
export function askToSignIn(signal?: AbortSignal): Promise<SignInAsk> {
  return request<SignInAsk>('/admin/session/requests', { method: 'POST', signal });
}

/** What became of this browser's request; approved, it carries the session's proof (and the companion sets the cookie). */
export function signInAnswer(secret: string, signal?: AbortSignal): Promise<SignInAnswer> {
  const body: SignInAnswerRequest = { secret };
  return request<SignInAnswer>('/admin/session/requests/answer', { method: 'POST', body: JSON.stringify(body), signal });
}

/** The browsers waiting to be signed in (signed in only). */
export function waitingSignIns(signal?: AbortSignal): Promise<WaitingSignIns> {
  return request<WaitingSignIns>('/admin/session/requests', { signal, cache: 'no-store' });
}

/** Lets in the waiting browser that shows this code. */
export async function approveSignIn(code: string): Promise<void> {
  const body: SignInApproval = { code };
  const response = await send('/admin/session/requests/approve', { method: 'POST', body: JSON.stringify(body) });
  await response.body?.cancel();
}

/** Refuses a waiting browser. */
export async function refuseSignIn(id: string): Promise<void> {
  const response = await send(`/admin/session/requests/${encodeURIComponent(id)}`, { method: 'DELETE' });
  await response.body?.cancel();
}
