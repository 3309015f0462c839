import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, LoggingMessageNotification, Progress, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpCallFailure, McpFailureLayer, McpServiceState, McpServiceStatus } from '#shared/api/bridge.js';
import type { McpServiceSettings } from '#shared/api/config.js';
import type { Logger } from '../logger.js';
import type { ToolCatalog } from '../tools/catalog.js';
import { Backoff } from './backoff.js';
import { ConnectionSecrets } from './credentials.js';
import { discovered, listAllTools, unusableList, usableTools } from './discovery.js';
import { contentText, failure } from '../tools/result.js';
import { callFailure, ConnectFailure, describeConnectError } from './failures.js';
import type { SecretAccess } from '../store/secrets.js';
import { signedIn } from './oauth.js';
import { redactValue } from '../redaction.js';
import { argumentsProblem } from './arguments.js';
import { openSession, type SessionEvents } from './open-session.js';
import { sdk } from './sdk.js';
import { connectionChanged } from './settings.js';
import { ProcessTransport } from './stdio-transport.js';
import { Attempt, closeSession, type Session } from './session.js';

export interface ConnectionContext {
  catalog: ToolCatalog;
  secrets: SecretAccess;
  log: Logger;
  version: string;
  /** The service sent a log message (notifications/message). */
  logged?(message: LoggingMessageNotification['params']): void;
  /** The service's resources or prompts changed (list_changed). */
  listChanged?(kind: 'resources' | 'prompts'): void;
}

/** Layers worth retrying on their own: the others need the owner (sign-in, settings, the service's code). */
const RETRYABLE: McpFailureLayer[] = ['transport', 'discovery_timeout'];

/**
 * One outbound MCP service: connects (stdio or HTTP: open-session.ts), discovers its tools into
 * the catalog, follows list-changed notifications, calls tools with the service's timeout,
 * reconnects with backoff (backoff.ts) after transport failures, and reports its state with the
 * layer that failed, cleaned of the secrets it was given (credentials.ts).
 */
export class ServiceConnection {
  private state: McpServiceState = 'disconnected';
  private layer: McpFailureLayer | null = null;
  private message: string | null = null;
  private since = Date.now();
  private readonly backoff = new Backoff();
  private warnings: string[] = [];
  private lastCallError: McpCallFailure | null = null;
  private session?: Session;
  private serverInfo: { name: string; version: string } | null = null;
  private generation = 0;
  private opening?: Promise<void>;
  private attempt?: Attempt;
  /** Whether the owner wants this service connected (start, reconnect); cleared by close. */
  private wanted = false;
  private raw: Tool[] = [];
  /** Progress listeners of calls in flight, by the progress token Hearth sent with the call. */
  private readonly progress = new Map<string, (progress: Progress) => void>();
  private readonly secrets: ConnectionSecrets;

  constructor(
    public settings: McpServiceSettings,
    private readonly context: ConnectionContext,
  ) {
    this.secrets = new ConnectionSecrets(context.secrets);
  }

  get name(): string {
    return this.settings.name;
  }

  /** Applies new settings: a new connection when the connection changed, otherwise only the classes and the view. */
  async update(next: McpServiceSettings): Promise<void> {
    const reconnect = connectionChanged(this.settings, next);
    const wasWanted = this.wanted;
    this.settings = next;
    if (!reconnect) {
      if (this.state === 'connected') this.publish();
      return;
    }
    await this.close();
    if (next.enabled && (next.auto_connect || wasWanted)) void this.connect();
  }

  /** Connects unless connected; resolves when this attempt settled (connected or failed). */
  connect(): Promise<void> {
    if (!this.settings.enabled) {
      this.setState('disconnected', null, 'The service is disabled (enabled: false); its settings are kept.');
      return Promise.resolve();
    }
    this.wanted = true;
    if (this.opening) return this.opening;
    if (this.state === 'connected') return Promise.resolve();
    this.cancelRetry();
    this.opening = this.open().finally(() => (this.opening = undefined));
    return this.opening;
  }

  /** Drops the connection and connects again, with a fresh retry count. */
  async reconnect(): Promise<void> {
    await this.close();
    this.backoff.reset();
    await this.connect();
  }

  /** Ends the connection (and its process); the service stays disconnected until asked again. */
  async close(): Promise<void> {
    this.wanted = false;
    this.cancelRetry();
    this.generation += 1;
    const session = this.session;
    const attempt = this.attempt;
    this.session = undefined;
    this.attempt = undefined;
    this.raw = [];
    this.context.catalog.removeService(this.name);
    await Promise.all([attempt?.abandon(), session ? closeSession(session) : undefined]);
    await this.opening?.catch(() => undefined);
    this.setState('disconnected', null, null);
  }

  status(): McpServiceStatus {
    const transport = this.session?.transport ?? this.attempt?.transports.at(-1);
    const auth = this.settings.auth;
    return {
      name: this.name,
      transport: this.settings.transport,
      enabled: this.settings.enabled,
      auto_connect: this.settings.auto_connect,
      expose: this.settings.expose,
      state: this.state,
      layer: this.layer,
      message: this.message,
      since: new Date(this.since).toISOString(),
      protocol: this.session?.protocol ?? null,
      pid: transport instanceof ProcessTransport && !transport.exitStatus ? transport.pid : null,
      server: this.serverInfo,
      auth: auth.type === 'oauth' ? { type: 'oauth', signed_in: signedIn(this.settings, this.context.secrets) } : { type: auth.type },
      attempts: this.backoff.attempts,
      next_retry_at: this.backoff.at === null ? null : new Date(this.backoff.at).toISOString(),
      tools: this.context.catalog.forService(this.name).map((entry) => ({ name: entry.name, tool: entry.tool, class: entry.class, exposed: false })),
      warnings: [
        ...this.warnings,
        ...(transport instanceof ProcessTransport && transport.junkLines > 0
          ? [`The process wrote ${transport.junkLines} line(s) to stdout that are not MCP messages (skipped), e.g. "${transport.firstJunk}".`]
          : []),
      ],
      last_call_error: this.lastCallError,
    };
  }

  /** The MCP client of the open connection, for resources and prompts; undefined unless connected. */
  connectedClient(): Client | undefined {
    return this.state === 'connected' ? this.session?.client : undefined;
  }

  /**
   * Calls one of this service's tools by its own name; failures are results with isError, never throws (except on abort).
   * With `onprogress`, the call asks the service for progress notifications and hands each one on.
   */
  async call(tool: string, args: Record<string, unknown>, signal?: AbortSignal, onprogress?: (progress: Progress) => void): Promise<CallToolResult> {
    const session = this.session;
    if (this.state !== 'connected' || !session) {
      const why = this.message ? `: ${this.message}` : '.';
      const message = `The service "${this.name}" is not connected (${this.state}${this.layer ? `, ${this.layer}` : ''})${why}`;
      this.noteCall(tool, this.layer ?? 'transport', message);
      return failure(message);
    }
    // Arguments Hearth itself cannot send fail this call only: the connection is fine.
    const unsendable = argumentsProblem(args);
    if (unsendable) {
      this.noteCall(tool, 'tool_error', unsendable);
      return failure(unsendable);
    }
    const timeout = this.settings.tool_call_timeout_ms;
    // Hearth routes progress itself: the SDK forgets a call's progress listener as soon as its result
    // arrives, which loses a last update that arrived just before it.
    const token = onprogress ? `hearth-${randomUUID()}` : undefined;
    if (token) this.progress.set(token, onprogress!);
    try {
      const result = (await session.client.callTool(
        { name: tool, arguments: args, ...(token ? { _meta: { progressToken: token } } : {}) },
        sdk().CallToolResultSchema,
        {
          signal,
          timeout,
          maxTotalTimeout: timeout,
        },
      )) as CallToolResult;
      if (result.isError) {
        // What the service wrote as text: the owner's note keeps only that.
        const text = this.clean(contentText({ content: result.content.filter((block) => block.type === 'text') }));
        this.noteCall(
          tool,
          /denied|not allowed|outside|permission|forbidden|EACCES|EPERM|unauthori[sz]ed/i.test(text) ? 'execution_denied' : 'tool_error',
          text,
        );
      }
      return result;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const failed = callFailure(error, this.name, tool, timeout);
      this.noteCall(tool, failed.layer, this.clean(failed.message));
      // The connection itself is broken (an HTTP service that went away, a lost session): start over.
      if (failed.layer === 'transport' && this.session === session) this.drop(session, `The connection to the service failed during a call: ${failed.message}`);
      return failure(this.clean(failed.message));
    } finally {
      if (token) this.progress.delete(token);
    }
  }

  private async open(): Promise<void> {
    const generation = ++this.generation;
    const attempt = new Attempt();
    this.attempt = attempt;
    this.setState('connecting', null, null);
    const limit = this.settings.discovery_timeout_ms;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new ConnectFailure('discovery_timeout', `The service did not complete the handshake and tool discovery within ${limit} ms (discovery_timeout_ms).`),
          ),
        limit,
      );
    });
    const starting = openSession({ settings: this.settings, version: this.context.version, secrets: this.secrets, attempt, events: this.events(generation) });
    try {
      const { session, tools } = await Promise.race([starting, timedOut]);
      if (generation !== this.generation) {
        await closeSession(session);
        return;
      }
      this.serverInfo = session.client.getServerVersion() ?? null;
      const unusable = unusableList(tools);
      if (unusable) {
        // Nothing to offer: the process is not kept; the owner fixes the service and reconnects.
        this.generation += 1;
        await closeSession(session);
        this.attempt = undefined;
        this.fail(unusable.layer, unusable.message);
        return;
      }
      this.session = session;
      this.attempt = undefined;
      this.applyTools(tools);
    } catch (error) {
      void starting.then(({ session }) => closeSession(session)).catch(() => undefined);
      await attempt.abandon();
      if (generation !== this.generation) return;
      this.attempt = undefined;
      let failure = error instanceof ConnectFailure ? error : describeConnectError(error);
      if ((attempt.process?.junkLines ?? 0) > 0 && failure.layer === 'discovery_timeout') {
        failure = new ConnectFailure('transport', 'The service does not speak MCP on stdout.');
      }
      this.fail(failure.layer, attempt.explain(failure.message));
    } finally {
      clearTimeout(timer);
    }
  }

  /** What the client of one attempt hears, acted on only while that attempt is the current one. */
  private events(generation: number): SessionEvents {
    const current = () => generation === this.generation;
    return {
      toolsChanged: () => void this.refresh(generation),
      listChanged: (kind) => current() && this.context.listChanged?.(kind),
      progress: (token, progress) => this.progress.get(token)?.(progress),
      // A service's log message is passed on to /mcp clients: it may repeat the credentials the service was given.
      logged: (message) => current() && this.context.logged?.(redactValue(message, this.secrets.values()) as LoggingMessageNotification['params']),
      closed: () => this.lost(generation),
    };
  }

  /** A list-changed notification: the whole catalog of the service is fetched again and replaces the old one. */
  private async refresh(generation: number): Promise<void> {
    const session = this.session;
    if (generation !== this.generation || !session) return;
    try {
      const tools = await listAllTools(session.client, this.settings.discovery_timeout_ms);
      if (generation !== this.generation) return;
      this.applyTools(tools);
    } catch (error) {
      if (generation !== this.generation) return;
      const failure = error instanceof ConnectFailure ? error : describeConnectError(error);
      this.context.log.warn(
        { service: this.name, layer: failure.layer },
        `MCP service "${this.name}": refreshing its tools failed: ${this.clean(failure.message)}`,
      );
      this.warnings = [`Refreshing the tool list failed (${failure.layer}): ${this.clean(failure.message)}`];
    }
  }

  /**
   * Puts a tool list in the catalog, replacing the service's previous one at once. After a
   * refresh an unusable list empties the service's catalog and marks it failed (zero_tools,
   * schema); the connection stays, so a later list-changed notification can bring tools back.
   */
  private applyTools(tools: Tool[]): void {
    const unusable = unusableList(tools);
    if (unusable) {
      this.raw = [];
      this.warnings = [];
      this.context.catalog.removeService(this.name);
      this.fail(unusable.layer, unusable.message);
      return;
    }
    const { usable, problems } = usableTools(tools);
    this.warnings = problems.length > 0 ? [`${problems.length} tool(s) skipped: ${problems.join('; ')}`] : [];
    this.raw = usable;
    this.backoff.reset();
    this.publish();
    this.setState('connected', null, null);
  }

  /** Puts the discovered tools in the catalog with their classes under the current settings. */
  private publish(): void {
    this.context.catalog.replaceService(this.name, discovered(this.raw, this.settings.tool_classes));
  }

  /** The connection ended without being asked to. */
  private lost(generation: number): void {
    if (generation !== this.generation || !this.session) return;
    this.drop(this.session, 'The connection to the service closed unexpectedly.');
  }

  /** Gives up a broken session: its tools leave the catalog, the service is failed (transport) and retried. */
  private drop(session: Session, message: string): void {
    if (this.session !== session) return;
    this.generation += 1;
    this.session = undefined;
    this.raw = [];
    this.context.catalog.removeService(this.name);
    void closeSession(session);
    const attempt = new Attempt();
    attempt.add(session.transport);
    this.fail('transport', attempt.explain(message));
  }

  private fail(layer: McpFailureLayer, message: string): void {
    this.backoff.failed();
    this.setState('failed', layer, message);
    // The message is the service's own text, which may echo the credentials it was sent.
    this.context.log.warn({ service: this.name, layer }, `MCP service "${this.name}" failed (${layer}): ${this.clean(message)}`);
    if (RETRYABLE.includes(layer)) this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (!this.wanted || !this.settings.enabled) return;
    if (!this.backoff.schedule(() => void this.connect()))
      this.message = `${this.message ?? ''} Gave up after ${this.backoff.attempts} attempts; reconnect with: hearth mcp reconnect ${this.name}`.trim();
  }

  private cancelRetry(): void {
    this.backoff.cancel();
  }

  private setState(state: McpServiceState, layer: McpFailureLayer | null, message: string | null): void {
    if (state !== this.state || layer !== this.layer || message !== this.message) this.since = Date.now();
    this.state = state;
    this.layer = layer;
    this.message = message === null ? null : this.clean(message);
    if (state !== 'failed') this.cancelRetry();
  }

  private noteCall(tool: string, layer: McpCallFailure['layer'], message: string): void {
    this.lastCallError = { tool, layer, message: this.clean(message).slice(0, 1000), at: new Date().toISOString() };
  }

  private clean(text: string): string {
    return this.secrets.clean(text);
  }
}
