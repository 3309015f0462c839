/** Failures in words, for the stores to show. */
import { ApiError } from '$lib/api/client';
import { session } from './session.svelte';

/** What went wrong, as the error says it. */
export const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * A failed request to the owner's (admin) routes in words. A refused admin session is forgotten,
 * and the words say to sign in to do `purpose` ("change how models load") and how.
 */
export function adminProblem(error: unknown, purpose: string): string {
  if (error instanceof ApiError && error.code === 'admin_credential_required') {
    session.markSignedOut();
    return `Sign in to ${purpose}. ${session.howToSignIn}`;
  }
  return describe(error);
}
