import { HearthError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { CloudWorkspaceSettings } from '#shared/api/config.js';
import type { CloudLoginStart, CloudWorkspaceStatus } from '#shared/api/remote.js';
import {
  configuration,
  describe,
  finishBrowserSignIn,
  grantRevoked,
  pollDeviceSignIn,
  refresh,
  startBrowserSignIn,
  startDeviceSignIn,
  workspaceClaim,
  type BrowserSignIn,
  type Tokens,
} from './oauth.js';
import { signInSecretName } from './settings.js';
import type { SecretAccess } from '../store/secrets.js';

/** One workspace's sign-in, kept as one secret (JSON): the tokens and what they are bound to. */
interface SignInRecord {
  issuer: string;
  client_id: string;
  workspace_id: string;
  subject: string;
  access_token: string;
  refresh_token?: string;
  /** Milliseconds since the epoch; null when the server gave no lifetime. */
  expires_at: number | null;
  signed_in_at: number;
  /** Set when the authorization server refused the refresh token: the sign-in is over. */
  revoked_at?: number;
}

export interface SignInInputs {
  workspaces(): CloudWorkspaceSettings[];
  secrets: SecretAccess;
  log: Logger;
}

/** Tokens are refreshed this long before they expire. */
export const REFRESH_MARGIN_MS = 60_000;
const PENDING_LIFETIME_MS = 10 * 60_000;

/**
 * Workspace sign-ins: start (browser with PKCE, or the device grant), finish, and hand out an
 * access token on every use after checking it is still bound to the configured issuer, client,
 * workspace and the account that signed in, refreshing it before it expires. A sign-in whose
 * account belongs to another workspace is refused and never kept.
 */
export class CloudSignIn {
  private readonly browser = new Map<string, { workspace: string; flow: BrowserSignIn; redirectUri: string; expires: number }>();
  private readonly devices = new Map<string, AbortController>();
  private readonly failures = new Map<string, string>();
  private readonly refreshing = new Map<string, Promise<string>>();

  constructor(private readonly inputs: SignInInputs) {}

  async begin(name: string, redirectUri: string): Promise<CloudLoginStart> {
    const settings = this.settings(name);
    const config = await configuration(settings, this.clientSecret(settings));
    this.failures.delete(name);
    if (settings.grant === 'device_code') {
      const response = await startDeviceSignIn(config, settings).catch((error: unknown) => {
        throw new HearthError('cloud_sign_in_required', `The device sign-in could not start: ${describe(error)}`);
      });
      this.devices.get(name)?.abort();
      const controller = new AbortController();
      this.devices.set(name, controller);
      const signal = AbortSignal.any([controller.signal, AbortSignal.timeout(response.expires_in * 1000)]);
      void pollDeviceSignIn(config, response, signal)
        .then((tokens) => this.bind(settings, config, tokens))
        .catch((error: unknown) => this.failed(name, error))
        .finally(() => {
          if (this.devices.get(name) === controller) this.devices.delete(name);
        });
      return {
        grant: 'device_code',
        verification_uri: response.verification_uri,
        ...(response.verification_uri_complete ? { verification_uri_complete: response.verification_uri_complete } : {}),
        user_code: response.user_code,
        expires_at: new Date(Date.now() + response.expires_in * 1000).toISOString(),
      };
    }
    const flow = await startBrowserSignIn(config, settings, redirectUri);
    const expires = Date.now() + PENDING_LIFETIME_MS;
    for (const [state, pending] of this.browser) if (pending.expires < Date.now() || pending.workspace === name) this.browser.delete(state);
    this.browser.set(flow.state, { workspace: name, flow, redirectUri, expires });
    return { grant: 'authorization_code', authorization_url: flow.url, expires_at: new Date(expires).toISOString() };
  }

  /** The loopback redirect: exchanges the code (PKCE, state, nonce checked) and binds the sign-in. */
  async finish(query: URLSearchParams): Promise<CloudWorkspaceStatus> {
    const state = query.get('state') ?? '';
    const pending = this.browser.get(state);
    if (!pending || pending.expires < Date.now())
      throw new HearthError(
        'invalid_request_error',
        'No sign-in is waiting for this redirect (it expired, or was already used). Start again: hearth cloud login NAME',
      );
    this.browser.delete(state);
    const settings = this.settings(pending.workspace);
    const config = await configuration(settings, this.clientSecret(settings));
    let tokens: Tokens;
    try {
      const callback = new URL(pending.redirectUri);
      callback.search = query.toString();
      tokens = await finishBrowserSignIn(config, pending.flow, callback);
    } catch (error) {
      this.failed(pending.workspace, error);
      throw new HearthError('cloud_sign_in_required', `Sign-in to "${pending.workspace}" failed: ${describe(error)}`);
    }
    await this.bind(settings, config, tokens).catch((error: unknown) => {
      this.failed(pending.workspace, error);
      throw error;
    });
    return this.status(pending.workspace);
  }

  /** A valid access token for the workspace, checked against its settings on every use and refreshed before expiry. */
  async accessToken(name: string): Promise<string> {
    const settings = this.settings(name);
    const record = this.checked(settings);
    if (record.expires_at === null || record.expires_at - Date.now() > REFRESH_MARGIN_MS) return record.access_token;
    return this.refreshOnce(settings, record);
  }

  /** The workspace answered 401 to this token: refresh once (another caller may have already). */
  async rejected(name: string, token: string): Promise<string> {
    const settings = this.settings(name);
    const record = this.checked(settings);
    if (record.access_token !== token) return record.access_token;
    return this.refreshOnce(settings, record);
  }

  status(name: string): CloudWorkspaceStatus {
    const settings = this.settings(name);
    const base = { name, issuer: settings.issuer, workspace_id: settings.workspace_id, grant: settings.grant };
    const record = this.read(settings);
    const pending = this.devices.has(name) || [...this.browser.values()].some((entry) => entry.workspace === name && entry.expires > Date.now());
    const known = {
      subject: record?.subject ?? null,
      expires_at: record?.expires_at ? new Date(record.expires_at).toISOString() : null,
      signed_in_at: record ? new Date(record.signed_in_at).toISOString() : null,
    };
    if (pending) return { ...base, ...known, state: 'pending', message: null };
    if (!record) return { ...base, ...known, state: 'signed_out', message: this.failures.get(name) ?? null };
    try {
      this.checked(settings);
      return { ...base, ...known, state: 'signed_in', message: this.failures.get(name) ?? null };
    } catch (error) {
      return { ...base, ...known, state: record.revoked_at ? 'revoked' : 'mismatch', message: (error as HearthError).message };
    }
  }

  logout(name: string): CloudWorkspaceStatus {
    this.settings(name);
    this.devices.get(name)?.abort();
    this.inputs.secrets.delete(signInSecretName(name));
    this.failures.delete(name);
    return this.status(name);
  }

  close(): void {
    for (const controller of this.devices.values()) controller.abort();
    this.devices.clear();
  }

  settings(name: string): CloudWorkspaceSettings {
    const settings = this.inputs.workspaces().find((workspace) => workspace.name === name);
    if (!settings)
      throw new HearthError('cloud_workspace_not_found', `No cloud workspace is named "${name}" (cloud_workspaces in config.yaml).`, { param: 'name' });
    return settings;
  }

  /** Binds fresh tokens to the account and workspace they prove, or refuses them (nothing is kept then). */
  private async bind(settings: CloudWorkspaceSettings, config: Awaited<ReturnType<typeof configuration>>, tokens: Tokens): Promise<void> {
    const subject = tokens.claims()?.sub;
    if (!subject) throw new HearthError('cloud_sign_in_required', 'The issuer returned no ID token: add the openid scope to the workspace settings.');
    const workspace = await workspaceClaim(config, tokens, settings.workspace_claim, subject);
    if (workspace !== settings.workspace_id) {
      throw new HearthError(
        'cloud_workspace_mismatch',
        `The account that signed in (${subject}) belongs to workspace "${workspace ?? 'none'}", not "${settings.workspace_id}"; the sign-in was not kept. Sign in with an account of that workspace.`,
      );
    }
    this.write(settings, {
      issuer: settings.issuer,
      client_id: settings.client_id,
      workspace_id: workspace,
      subject,
      access_token: tokens.access_token,
      ...(tokens.refresh_token ? { refresh_token: tokens.refresh_token } : {}),
      expires_at: expiry(tokens),
      signed_in_at: Date.now(),
    });
    this.failures.delete(settings.name);
    this.inputs.log.info({ workspace: settings.name, subject }, 'cloud workspace signed in');
  }

  /** The stored sign-in, if it is still bound to this workspace's issuer, client and workspace id. */
  private checked(settings: CloudWorkspaceSettings): SignInRecord {
    const record = this.read(settings);
    const login = `hearth cloud login ${settings.name}`;
    if (!record) throw new HearthError('cloud_sign_in_required', `Not signed in to the cloud workspace "${settings.name}". Sign in with: ${login}`);
    if (record.revoked_at)
      throw new HearthError(
        'cloud_sign_in_required',
        `The sign-in to "${settings.name}" was revoked or has expired at the issuer. Sign in again with: ${login}`,
      );
    if (record.issuer !== settings.issuer || record.client_id !== settings.client_id || record.workspace_id !== settings.workspace_id) {
      throw new HearthError(
        'cloud_workspace_mismatch',
        `The stored sign-in is bound to workspace "${record.workspace_id}" at ${record.issuer}, not to "${settings.workspace_id}" at ${settings.issuer}; it is not used. Sign in again with: ${login}`,
      );
    }
    return record;
  }

  private refreshOnce(settings: CloudWorkspaceSettings, record: SignInRecord): Promise<string> {
    let running = this.refreshing.get(settings.name);
    if (!running) {
      running = this.refresh(settings, record).finally(() => this.refreshing.delete(settings.name));
      this.refreshing.set(settings.name, running);
    }
    return running;
  }

  private async refresh(settings: CloudWorkspaceSettings, record: SignInRecord): Promise<string> {
    const login = `hearth cloud login ${settings.name}`;
    if (!record.refresh_token) {
      this.write(settings, { ...record, revoked_at: Date.now() });
      throw new HearthError('cloud_sign_in_required', `The sign-in to "${settings.name}" has expired and cannot be refreshed. Sign in again with: ${login}`);
    }
    const config = await configuration(settings, this.clientSecret(settings));
    let tokens: Tokens;
    try {
      tokens = await refresh(config, record.refresh_token);
    } catch (error) {
      if (!grantRevoked(error)) throw new HearthError('cloud_agent_error', `The token of "${settings.name}" could not be refreshed: ${describe(error)}`);
      this.write(settings, { ...record, revoked_at: Date.now() });
      throw new HearthError(
        'cloud_sign_in_required',
        `The sign-in to "${settings.name}" was revoked or has expired at the issuer. Sign in again with: ${login}`,
      );
    }
    const subject = tokens.claims()?.sub;
    if (subject !== undefined && subject !== record.subject) {
      this.write(settings, { ...record, revoked_at: Date.now() });
      throw new HearthError(
        'cloud_workspace_mismatch',
        `The refreshed sign-in of "${settings.name}" names another account; it is not used. Sign in again with: ${login}`,
      );
    }
    const next = { ...record, access_token: tokens.access_token, refresh_token: tokens.refresh_token ?? record.refresh_token, expires_at: expiry(tokens) };
    this.write(settings, next);
    return next.access_token;
  }

  private failed(name: string, error: unknown): void {
    const message = error instanceof HearthError ? error.message : `Sign-in failed: ${describe(error)}`;
    this.failures.set(name, message);
    this.inputs.log.warn({ workspace: name, reason: message }, 'cloud workspace sign-in failed');
  }

  private clientSecret(settings: CloudWorkspaceSettings): string | undefined {
    return settings.client_secret ? this.inputs.secrets.resolve(settings.client_secret) : undefined;
  }

  private read(settings: CloudWorkspaceSettings): SignInRecord | undefined {
    const text = this.inputs.secrets.resolve(`secret:${signInSecretName(settings.name)}`);
    if (!text) return undefined;
    try {
      return JSON.parse(text) as SignInRecord;
    } catch {
      return undefined;
    }
  }

  private write(settings: CloudWorkspaceSettings, record: SignInRecord): void {
    this.inputs.secrets.set(signInSecretName(settings.name), JSON.stringify(record));
  }
}

function expiry(tokens: Tokens): number | null {
  const seconds = tokens.expiresIn();
  return seconds === undefined ? null : Date.now() + seconds * 1000;
}
