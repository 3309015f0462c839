import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, LoggingMessageNotification, Progress } from '@modelcontextprotocol/sdk/types.js';
import type { McpLoginStart, McpServiceStatus } from '#shared/api/bridge.js';
import type { McpServiceSettings } from '#shared/api/config.js';
import { HearthError } from '../errors.js';
import type { Logger } from '../logger.js';
import { ToolCatalog, type CatalogEntry } from '../tools/catalog.js';
import { exposedUnder } from '../tools/classes.js';
import { ServiceConnection } from './connection.js';
import { loadSdk } from './sdk.js';
import { failure } from '../tools/result.js';
import type { SecretAccess } from '../store/secrets.js';
import { StoredOAuthProvider } from './oauth.js';
import { redact } from '../redaction.js';

export interface McpManagerOptions {
  services: McpServiceSettings[];
  secrets: SecretAccess;
  log: Logger;
  version: string;
}

/** Something a service sent on its own, relayed to the /mcp sessions that may see the service. */
export type ServiceEvent =
  { service: string; type: 'log'; message: LoggingMessageNotification['params'] } | { service: string; type: 'list_changed'; kind: 'resources' | 'prompts' };

/** How long a started sign-in waits for its redirect. */
const LOGIN_TTL_MS = 15 * 60_000;

interface PendingLogin {
  service: string;
  provider: StoredOAuthProvider;
  url: string;
  expires: number;
}

/**
 * The outbound MCP services: one connection each, the tool catalog they fill, OAuth sign-in,
 * and the state of each for the owner. Starting never waits for a service; closing ends every
 * connection and every process.
 */
export class McpManager {
  readonly catalog = new ToolCatalog();
  private readonly connections = new Map<string, ServiceConnection>();
  private readonly relays = new Set<(event: ServiceEvent) => void>();
  private readonly logins = new Map<string, PendingLogin>();
  private queue: Promise<void> = Promise.resolve();
  private started = false;
  private closed = false;

  constructor(private readonly options: McpManagerOptions) {
    for (const settings of options.services) this.connections.set(settings.name, this.connection(settings));
  }

  /** Connects every enabled auto-connect service in the background. */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    for (const connection of this.connections.values()) {
      if (connection.settings.enabled && connection.settings.auto_connect) void connection.connect();
    }
  }

  /** Puts a new mcp_services section in force: removed services close, changed ones reconnect, new ones connect. */
  configure(services: McpServiceSettings[]): void {
    if (this.closed) return;
    const next = new Map(services.map((settings) => [settings.name, settings]));
    this.queue = this.queue.then(async () => {
      const work: Promise<void>[] = [];
      for (const [name, connection] of this.connections) {
        if (next.has(name)) continue;
        this.connections.delete(name);
        work.push(connection.close());
      }
      for (const settings of services) {
        const existing = this.connections.get(settings.name);
        if (existing) work.push(existing.update(settings));
        else {
          const connection = this.connection(settings);
          this.connections.set(settings.name, connection);
          if (this.started && settings.enabled && settings.auto_connect) void connection.connect();
        }
      }
      await Promise.all(work);
    });
    this.queue = this.queue.catch((error: unknown) => this.options.log.error({ err: error }, 'reconfiguring MCP services failed'));
  }

  status(): McpServiceStatus[] {
    return [...this.connections.values()].map((connection) => this.describe(connection));
  }

  serviceStatus(name: string): McpServiceStatus {
    return this.describe(this.get(name));
  }

  /** Drops and re-opens one service's connection; resolves with its state once the attempt settled. */
  async reconnect(name: string): Promise<McpServiceStatus> {
    const connection = this.get(name);
    if (!connection.settings.enabled)
      throw new HearthError('invalid_request_error', `The MCP service "${name}" is disabled; enable it in the configuration first.`, { param: 'name' });
    await connection.reconnect();
    return this.describe(connection);
  }

  /** Every tool of the catalog (the agents' view). External callers use permittedTools() on this. */
  entries(): readonly CatalogEntry[] {
    return this.catalog.all();
  }

  /** Runs a catalog entry with its service's timeout; failures come back as `isError` results. `onprogress` hears the service's progress. */
  async call(entry: CatalogEntry, args: Record<string, unknown>, signal?: AbortSignal, onprogress?: (progress: Progress) => void): Promise<CallToolResult> {
    const connection = entry.service === null ? undefined : this.connections.get(entry.service);
    if (!connection) return failure(`The tool "${entry.name}" has no implementation here.`);
    return connection.call(entry.tool, args, signal, onprogress);
  }

  /** The MCP client of a connected service (its resources and prompts), or undefined. */
  connectedClient(service: string): Client | undefined {
    return this.connections.get(service)?.connectedClient();
  }

  /** Hears what services send on their own: log messages, and changes of their resource and prompt lists. */
  onServiceEvent(listener: (event: ServiceEvent) => void): () => void {
    this.relays.add(listener);
    return () => this.relays.delete(listener);
  }

  /**
   * Starts OAuth sign-in for an HTTP service: discovery, dynamic client registration and PKCE
   * through the SDK; the browser is to open authorization_url and comes back to redirectUri.
   */
  async beginLogin(name: string, redirectUri: string): Promise<McpLoginStart> {
    const connection = this.get(name);
    const settings = connection.settings;
    if (settings.transport !== 'http' || settings.auth.type !== 'oauth' || !settings.url) {
      throw new HearthError('invalid_request_error', `The MCP service "${name}" does not use OAuth (auth.type: oauth on an http service).`, { param: 'name' });
    }
    this.expireLogins();
    const provider = new StoredOAuthProvider(settings, this.options.secrets, redirectUri);
    // A sign-in is always fresh: the owner may be switching accounts.
    provider.invalidateCredentials('tokens');
    let result;
    try {
      result = await (await loadSdk()).auth(provider, { serverUrl: settings.url });
    } catch (error) {
      const message = redact(error instanceof Error ? error.message : String(error), provider.secretValues());
      throw new HearthError('provider_error', `Starting sign-in with "${name}" failed: ${message}`, { param: 'name' });
    }
    if (result === 'AUTHORIZED' || !provider.authorizationUrl || !provider.lastState) {
      throw new HearthError('provider_error', `The authorization server of "${name}" did not ask for a browser sign-in.`, { param: 'name' });
    }
    this.logins.set(provider.lastState, { service: name, provider, url: settings.url, expires: Date.now() + LOGIN_TTL_MS });
    return { service: name, authorization_url: provider.authorizationUrl.href, redirect_uri: redirectUri };
  }

  /** The redirect came back: exchanges the code (PKCE), keeps the tokens as a secret, reconnects. */
  async finishLogin(state: string, code: string): Promise<McpServiceStatus> {
    this.expireLogins();
    const pending = this.logins.get(state);
    this.logins.delete(state);
    if (!pending)
      throw new HearthError('invalid_request_error', 'This sign-in is unknown or has expired. Start again with: hearth mcp login NAME', { param: 'state' });
    try {
      await (await loadSdk()).auth(pending.provider, { serverUrl: pending.url, authorizationCode: code });
    } catch (error) {
      const message = redact(error instanceof Error ? error.message : String(error), pending.provider.secretValues());
      throw new HearthError('provider_error', `Completing sign-in with "${pending.service}" failed: ${message}`, { param: 'code' });
    }
    const connection = this.connections.get(pending.service);
    if (!connection) throw new HearthError('mcp_service_not_found', `The MCP service "${pending.service}" was removed during sign-in.`);
    await connection.reconnect();
    return this.describe(connection);
  }

  /** Ends every connection and process; nothing is left running. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.catch(() => undefined);
    await Promise.all([...this.connections.values()].map((connection) => connection.close()));
    this.logins.clear();
    this.relays.clear();
  }

  private connection(settings: McpServiceSettings): ServiceConnection {
    return new ServiceConnection(settings, {
      catalog: this.catalog,
      secrets: this.options.secrets,
      log: this.options.log,
      version: this.options.version,
      logged: (message) => this.relay({ service: settings.name, type: 'log', message }),
      listChanged: (kind) => this.relay({ service: settings.name, type: 'list_changed', kind }),
    });
  }

  private get(name: string): ServiceConnection {
    const connection = this.connections.get(name);
    if (!connection)
      throw new HearthError('mcp_service_not_found', `No MCP service is named "${name}". List them with GET /admin/mcp/services.`, { param: 'name' });
    return connection;
  }

  private describe(connection: ServiceConnection): McpServiceStatus {
    const status = connection.status();
    status.tools = status.tools.map((tool) => ({ ...tool, exposed: connection.settings.enabled && exposedUnder(connection.settings.expose, tool.class) }));
    if (!connection.settings.enabled && status.state === 'disconnected') status.message = 'Disabled (enabled: false); the settings are kept.';
    else if (status.state === 'disconnected' && !status.message && !connection.settings.auto_connect)
      status.message = `Not connected (auto_connect: false). Connect with: hearth mcp reconnect ${connection.name}`;
    return status;
  }

  private expireLogins(): void {
    const now = Date.now();
    for (const [state, pending] of this.logins) if (pending.expires <= now) this.logins.delete(state);
  }

  private relay(event: ServiceEvent): void {
    for (const listener of this.relays) {
      try {
        listener(event);
      } catch {
        // One listener's failure stays its own.
      }
    }
  }
}
