import type { CloudSignInState, RemoteHostState } from '#shared/api/remote.js';

/** A paired host's connection, or a cloud workspace's sign-in, in words. */
export const stateWords: Record<RemoteHostState | CloudSignInState, string> = {
  signed_out: 'not signed in',
  signed_in: 'signed in',
  pending: 'signing in…',
  revoked: 'sign-in revoked',
  mismatch: 'sign-in refused',
  connected: 'connected',
  unreachable: 'unreachable',
  certificate_changed: 'certificate changed',
  refused: 'refused',
  not_paired: 'no longer paired',
};
