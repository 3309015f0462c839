import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { KeyGrant } from '../access/keys.js';
import type { ConfigDocument } from '#shared/api/config.js';
import type { ToolCaller } from './bridge.js';
import { ENDPOINT_CAPABILITIES, registerHandlers } from './endpoint-handlers.js';
import { SessionEventStore } from './event-store.js';
import { loadSdk } from './sdk.js';
import type { McpManager, ServiceEvent } from './manager.js';
import { serviceOffered } from '../tools/permitted.js';

export interface EndpointRequest {
  req: IncomingMessage;
  res: ServerResponse;
  /** The JSON body, already parsed (POST). */
  body: unknown;
  /** The caller's key; a session only ever answers the key that opened it. */
  grant: KeyGrant | null;
  /** The SDK's DNS-rebinding protection: exact Host values and Origins accepted (none: off). */
  allowedHosts?: string[];
  allowedOrigins?: string[];
}

interface Session {
  owner: string | null;
  grant: KeyGrant | null;
  server: Server;
  transport: StreamableHTTPServerTransport;
  events: SessionEventStore;
  lastUsed: number;
}

/** The SSE `retry:` (milliseconds) sent on /mcp streams: how soon a client whose stream broke comes back with Last-Event-ID. */
export const STREAM_RETRY_MS = 1000;

export interface EndpointOptions {
  manager: McpManager;
  config: () => ConfigDocument;
  version: string;
  /** Sessions unused this long are closed (default 30 minutes). */
  idleMs?: number;
  /** At most this many sessions in all (default 256). */
  maxSessions?: number;
  /** At most this many sessions per key (keyless callers share one allowance; default 32): a key past it loses its own least recently used. */
  maxSessionsPerKey?: number;
}

/**
 * Hearth as an MCP server over Streamable HTTP: every session sees the catalog its caller may
 * use (the bridge's rules) and the services' resources and prompts, calls go to the same
 * services, and sessions hear list-changed notifications, the services' log messages and their
 * progress. Each session keeps its recent SSE events, so a broken stream resumes with Last-Event-ID.
 */
export class McpEndpoint {
  private readonly sessions = new Map<string, Session>();
  private readonly unsubscribe: (() => void)[];
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: EndpointOptions) {
    this.unsubscribe = [options.manager.catalog.onChange(() => this.notifyAll()), options.manager.onServiceEvent((event) => this.relay(event))];
    this.sweeper = setInterval(() => this.evictIdle(), 60_000);
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  async handle(request: EndpointRequest): Promise<void> {
    const sessionId = header(request.req.headers['mcp-session-id']);
    const owner = request.grant?.id ?? null;
    if (sessionId) {
      const session = this.sessions.get(sessionId);
      // Another key's session is answered like an unknown one.
      if (!session || session.owner !== owner) return jsonRpcError(request.res, 404, -32001, 'Session not found');
      session.lastUsed = Date.now();
      if (request.req.method === 'GET') {
        const lastEventId = header(request.req.headers['last-event-id']);
        if (lastEventId !== undefined && !session.events.knows(lastEventId))
          return jsonRpcError(
            request.res,
            400,
            -32000,
            'Bad Request: unknown Last-Event-ID (this session never sent it, or it is too old to replay). Open a new stream without it.',
          );
        // A new notification stream from the session's own caller replaces the old one, which a
        // dropped network may have left open on this side (the SDK would refuse it with 409).
        if (lastEventId === undefined) session.transport.closeStandaloneSSEStream();
      }
      await session.transport.handleRequest(request.req, request.res, request.body);
      return;
    }
    const { isInitializeRequest } = await loadSdk();
    const initializes = Array.isArray(request.body) ? request.body.some((message) => isInitializeRequest(message)) : isInitializeRequest(request.body);
    if (request.req.method !== 'POST' || !initializes) {
      return jsonRpcError(
        request.res,
        400,
        -32000,
        'Bad Request: no valid session. Send an initialize request first, then the Mcp-Session-Id header it returns.',
      );
    }
    this.evictIdle();
    if (!this.makeRoom(owner)) {
      return jsonRpcError(request.res, 503, -32000, 'Too many open MCP sessions on this server. Close unused sessions (DELETE /mcp) and retry.');
    }
    const transport = await this.open(request, owner);
    await transport.handleRequest(request.req, request.res, request.body);
  }

  async close(): Promise<void> {
    for (const stop of this.unsubscribe) stop();
    clearInterval(this.sweeper);
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(sessions.map((session) => endSession(session)));
  }

  private async open(request: EndpointRequest, owner: string | null): Promise<StreamableHTTPServerTransport> {
    const { manager, config, version } = this.options;
    const protect = request.allowedHosts !== undefined || request.allowedOrigins !== undefined;
    const { Server, StreamableHTTPServerTransport } = await loadSdk();
    const server = new Server({ name: 'hearth', version }, { capabilities: ENDPOINT_CAPABILITIES });
    const events = new SessionEventStore();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, session);
      },
      eventStore: events,
      retryInterval: STREAM_RETRY_MS,
      ...(protect ? { enableDnsRebindingProtection: true, allowedHosts: request.allowedHosts, allowedOrigins: request.allowedOrigins } : {}),
    });
    const session: Session = { owner, grant: request.grant, server, transport, events, lastUsed: Date.now() };
    registerHandlers(server, (): ToolCaller => ({ manager, config: config(), grant: request.grant }));
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    return transport;
  }

  /** The catalog changed (a service connected, refreshed or went away): its resources and prompts may have too. */
  private notifyAll(): void {
    for (const session of this.sessions.values()) {
      void session.server.sendToolListChanged().catch(() => undefined);
      void session.server.sendResourceListChanged().catch(() => undefined);
      void session.server.sendPromptListChanged().catch(() => undefined);
    }
  }

  /** A service's log message or list change, to every session whose caller may see that service. */
  private relay(event: ServiceEvent): void {
    const config = this.options.config();
    for (const session of this.sessions.values()) {
      if (!serviceOffered(config, session.grant, event.service)) continue;
      const { server, transport } = session;
      if (event.type === 'log') {
        const logger = event.message.logger ? `${event.service}/${event.message.logger}` : event.service;
        void server.sendLoggingMessage({ ...event.message, logger }, transport.sessionId).catch(() => undefined);
      } else if (event.kind === 'resources') void server.sendResourceListChanged().catch(() => undefined);
      else void server.sendPromptListChanged().catch(() => undefined);
    }
  }

  private evictIdle(): void {
    const idle = this.options.idleMs ?? 30 * 60_000;
    const now = Date.now();
    for (const [id, session] of this.sessions) {
      if (now - session.lastUsed > idle) {
        this.sessions.delete(id);
        void endSession(session);
      }
    }
  }

  /**
   * Room for one more session of `owner`: past its own allowance its least recently used session
   * goes. Sessions of other keys are never evicted; when the server as a whole is full and the
   * owner has none to give up, there is no room.
   */
  private makeRoom(owner: string | null): boolean {
    const own = [...this.sessions].filter(([, session]) => session.owner === owner).sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    const perKey = this.options.maxSessionsPerKey ?? 32;
    const total = this.options.maxSessions ?? 256;
    while (own.length > 0 && (own.length >= perKey || this.sessions.size >= total)) {
      const [id, session] = own.shift()!;
      this.sessions.delete(id);
      void endSession(session);
    }
    return this.sessions.size < total;
  }
}

async function endSession(session: Session): Promise<void> {
  await session.server.close().catch(() => undefined);
  await session.transport.close().catch(() => undefined);
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
