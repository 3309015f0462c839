import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { McpServiceSettings } from '#shared/api/config.js';
import type { SecretAccess } from '../store/secrets.js';
import { oauthSecretName } from './settings.js';

/** The path of Hearth's loopback redirect route (admin family, so loopback only). */
export const OAUTH_CALLBACK_PATH = '/admin/mcp/oauth/callback';

/** What one service's sign-in keeps, as one secret (JSON). */
interface OAuthRecord {
  /** The endpoint it was obtained for: a record for another URL is never used (tokens go nowhere else). */
  server_url: string;
  redirect_uri?: string;
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  verifier?: string;
  discovery?: OAuthDiscoveryState;
}

/**
 * The SDK's OAuth client for one service: discovery, dynamic client registration, PKCE and
 * refresh are the SDK's; this keeps what they produce as a secret and never opens anything by
 * itself. An authorization URL the SDK wants visited is only remembered: the owner starts sign-in
 * explicitly (`hearth mcp login NAME`).
 */
export class StoredOAuthProvider implements OAuthClientProvider {
  /** The last authorization URL the SDK asked to visit, and the state it carries. */
  authorizationUrl?: URL;
  lastState?: string;

  constructor(
    private readonly settings: McpServiceSettings,
    private readonly secrets: SecretAccess,
    private readonly redirectUri?: string,
  ) {}

  get redirectUrl(): string {
    return this.redirectUri ?? this.read().redirect_uri ?? `http://127.0.0.1${OAUTH_CALLBACK_PATH}`;
  }

  get clientMetadata(): OAuthClientMetadata {
    const auth = this.settings.auth.type === 'oauth' ? this.settings.auth : undefined;
    return {
      client_name: 'Hearth',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: auth?.client_secret ? 'client_secret_basic' : 'none',
      ...(auth?.scope ? { scope: auth.scope } : {}),
    };
  }

  state(): string {
    this.lastState = randomBytes(24).toString('base64url');
    return this.lastState;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const auth = this.settings.auth.type === 'oauth' ? this.settings.auth : undefined;
    if (auth?.client_id) {
      const secret = auth.client_secret ? this.secrets.resolve(auth.client_secret) : undefined;
      return { client_id: auth.client_id, ...(secret ? { client_secret: secret } : {}) };
    }
    const record = this.read();
    // A registration is for one redirect URI; Hearth's port may differ between runs.
    return record.client && record.redirect_uri === this.redirectUrl ? record.client : undefined;
  }

  saveClientInformation(client: OAuthClientInformationMixed): void {
    this.write({ ...this.read(), client, redirect_uri: this.redirectUrl });
  }

  tokens(): OAuthTokens | undefined {
    return this.read().tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.write({ ...this.read(), tokens });
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.authorizationUrl = authorizationUrl;
  }

  saveCodeVerifier(verifier: string): void {
    this.write({ ...this.read(), verifier });
  }

  codeVerifier(): string {
    const verifier = this.read().verifier;
    if (!verifier) throw new Error('No sign-in is in progress for this service (no PKCE verifier).');
    return verifier;
  }

  saveDiscoveryState(discovery: OAuthDiscoveryState): void {
    this.write({ ...this.read(), discovery });
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.read().discovery;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all') {
      this.secrets.delete(oauthSecretName(this.settings.name));
      return;
    }
    const record = this.read();
    const key = ({ client: 'client', tokens: 'tokens', verifier: 'verifier', discovery: 'discovery' } as const)[scope];
    delete record[key];
    this.write(record);
  }

  /** The secret values this sign-in holds, to keep them out of every diagnostic. */
  secretValues(): string[] {
    const record = this.read();
    const client = record.client as { client_secret?: string } | undefined;
    return [record.tokens?.access_token, record.tokens?.refresh_token, client?.client_secret, record.verifier].filter(
      (value): value is string => typeof value === 'string',
    );
  }

  private read(): OAuthRecord {
    const text = this.secrets.resolve(`secret:${oauthSecretName(this.settings.name)}`);
    if (!text) return { server_url: this.settings.url ?? '' };
    try {
      const record = JSON.parse(text) as OAuthRecord;
      if (record.server_url === this.settings.url) return record;
    } catch {
      // Unreadable: start over.
    }
    return { server_url: this.settings.url ?? '' };
  }

  private write(record: OAuthRecord): void {
    this.secrets.set(oauthSecretName(this.settings.name), JSON.stringify({ ...record, server_url: this.settings.url ?? '' }));
  }
}

/** Whether the service has tokens from a completed sign-in (for its current URL). */
export function signedIn(settings: McpServiceSettings, secrets: SecretAccess): boolean {
  return new StoredOAuthProvider(settings, secrets).tokens() !== undefined;
}
