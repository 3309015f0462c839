import * as client from 'openid-client';
import { HearthError } from '../errors.js';
import type { CloudWorkspaceSettings } from '#shared/api/config.js';
import { isLocalUrl } from './settings.js';

/*
 * The OAuth 2.0 / OpenID Connect side of a workspace sign-in, on openid-client: discovery,
 * authorization code with PKCE (S256) and a nonce, the device authorization grant, refresh, and
 * ID token validation (signature, issuer, audience, expiry). Plain http is allowed only for an
 * issuer on this machine.
 */

export type Tokens = client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;

const discovered = new Map<string, Promise<client.Configuration>>();

/** The issuer's metadata for this client, discovered once per issuer, client and secret. */
export function configuration(settings: CloudWorkspaceSettings, clientSecret: string | undefined): Promise<client.Configuration> {
  const key = JSON.stringify([settings.issuer, settings.client_id, clientSecret ?? null]);
  let found = discovered.get(key);
  if (!found) {
    const options = isLocalUrl(settings.issuer) ? { execute: [client.allowInsecureRequests] } : undefined;
    const authentication = clientSecret ? client.ClientSecretBasic(clientSecret) : client.None();
    found = client.discovery(new URL(settings.issuer), settings.client_id, undefined, authentication, options);
    discovered.set(key, found);
    // A failed discovery is not remembered: the next attempt tries again.
    found.catch(() => discovered.delete(key));
  }
  return found.catch((error: unknown) => {
    throw new HearthError('cloud_sign_in_required', `The workspace's issuer ${settings.issuer} could not be discovered: ${describe(error)}`, { cause: error });
  });
}

/** What a browser sign-in keeps between its start and the redirect back. */
export interface BrowserSignIn {
  url: string;
  state: string;
  verifier: string;
  nonce: string;
}

export async function startBrowserSignIn(config: client.Configuration, settings: CloudWorkspaceSettings, redirectUri: string): Promise<BrowserSignIn> {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: settings.scopes.join(' '),
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    // A refresh token is what lets Hearth stay signed in; OpenID providers issue one for offline_access with consent.
    ...(settings.scopes.includes('offline_access') ? { prompt: 'consent' } : {}),
  });
  return { url: url.href, state, verifier, nonce };
}

export async function finishBrowserSignIn(config: client.Configuration, pending: BrowserSignIn, callback: URL): Promise<Tokens> {
  return client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: pending.verifier,
    expectedState: pending.state,
    expectedNonce: pending.nonce,
    idTokenExpected: true,
  });
}

export function startDeviceSignIn(config: client.Configuration, settings: CloudWorkspaceSettings): Promise<client.DeviceAuthorizationResponse> {
  return client.initiateDeviceAuthorization(config, { scope: settings.scopes.join(' ') });
}

export function pollDeviceSignIn(config: client.Configuration, response: client.DeviceAuthorizationResponse, signal: AbortSignal): Promise<Tokens> {
  return client.pollDeviceAuthorizationGrant(config, response, undefined, { signal });
}

export function refresh(config: client.Configuration, refreshToken: string): Promise<Tokens> {
  return client.refreshTokenGrant(config, refreshToken);
}

/** The workspace claim from the validated ID token, else from the UserInfo endpoint (checked against the same subject). */
export async function workspaceClaim(config: client.Configuration, tokens: Tokens, claim: string, subject: string): Promise<string | undefined> {
  const fromToken = tokens.claims()?.[claim];
  if (typeof fromToken === 'string') return fromToken;
  const info = await client.fetchUserInfo(config, tokens.access_token, subject);
  const value = info[claim];
  return typeof value === 'string' ? value : undefined;
}

/** Whether the authorization server said the grant is gone (revoked, expired, or never valid). */
export function grantRevoked(error: unknown): boolean {
  return error instanceof client.ResponseBodyError && (error.error === 'invalid_grant' || error.error === 'invalid_token');
}

/** A short reason from an OAuth failure, never a token. */
export function describe(error: unknown): string {
  if (error instanceof client.ResponseBodyError) return `${error.error}${error.cause.error_description ? ` (${String(error.cause.error_description)})` : ''}`;
  if (error instanceof client.AuthorizationResponseError) return `${error.error}${error.error_description ? ` (${error.error_description})` : ''}`;
  return error instanceof Error ? error.message : String(error);
}
