import type { SignInRequest } from '#shared/api/admin.js';
import { session } from '$lib/stores/session.svelte';
import { send } from './client';

/**
 * Exchanges the one-time code of a sign-in link (`hearth open`) for the companion's admin
 * session: an HttpOnly cookie this page never sees, which the browser sends with the app's
 * same-origin /admin requests from then on.
 */
export async function signIn(code: string, signal?: AbortSignal): Promise<void> {
  const body: SignInRequest = { code };
  const response = await send('/admin/session', { method: 'POST', body: JSON.stringify(body), signal });
  await response.body?.cancel();
  session.markSignedIn();
}

/** Ends the admin session in this browser. */
export async function signOut(): Promise<void> {
  const response = await send('/admin/session', { method: 'DELETE' });
  await response.body?.cancel();
  session.markSignedOut();
}
