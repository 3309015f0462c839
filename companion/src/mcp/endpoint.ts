import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, isInitializeRequest, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { KeyGrant } from '../access/keys.js';
import type { ConfigDocument } from '#shared/api/config.js';
import { argumentsProblem } from './arguments.js';
import { argumentProblems, listMcpTools, permittedTool, type ToolCaller } from './bridge.js';
import { errorResult } from './failures.js';
import type { McpManager } from './manager.js';

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
  server: Server;
  transport: StreamableHTTPServerTransport;
  lastUsed: number;
}

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
 * use (the bridge's rules), calls go to the same services, and sessions hear list-changed
 * notifications when the catalog changes.
 */
export class McpEndpoint {
  private readonly sessions = new Map<string, Session>();
  private readonly unsubscribe: () => void;
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: EndpointOptions) {
    this.unsubscribe = options.manager.catalog.onChange(() => this.notifyAll());
    this.sweeper = setInterval(() => this.evictIdle(), 60_000);
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  async handle(request: EndpointRequest): Promise<void> {
    const header = request.req.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    const owner = request.grant?.id ?? null;
    if (sessionId) {
      const session = this.sessions.get(sessionId);
      // Another key's session is answered like an unknown one.
      if (!session || session.owner !== owner) return jsonRpcError(request.res, 404, -32001, 'Session not found');
      session.lastUsed = Date.now();
      await session.transport.handleRequest(request.req, request.res, request.body);
      return;
    }
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
    this.unsubscribe();
    clearInterval(this.sweeper);
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(sessions.map((session) => endSession(session)));
  }

  private async open(request: EndpointRequest, owner: string | null): Promise<StreamableHTTPServerTransport> {
    const { manager, config, version } = this.options;
    const protect = request.allowedHosts !== undefined || request.allowedOrigins !== undefined;
    const server = new Server({ name: 'hearth', version }, { capabilities: { tools: { listChanged: true } } });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, session);
      },
      ...(protect ? { enableDnsRebindingProtection: true, allowedHosts: request.allowedHosts, allowedOrigins: request.allowedOrigins } : {}),
    });
    const session: Session = { owner, server, transport, lastUsed: Date.now() };
    const caller = (): ToolCaller => ({ manager, config: config(), grant: request.grant });

    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listMcpTools(caller()) }));
    server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
      const name = call.params.name;
      const args = (call.params.arguments ?? {}) as Record<string, unknown>;
      let entry;
      try {
        entry = permittedTool(caller(), name);
      } catch {
        // Absent and forbidden look the same.
        throw new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`);
      }
      const bound = argumentsProblem(args);
      if (bound) return errorResult(`Invalid arguments for ${name}: ${bound}`);
      const problems = argumentProblems(entry, args);
      if (problems.length > 0)
        return errorResult(`Invalid arguments for ${name}: ${problems.map((problem) => `${problem.path} ${problem.message}`).join('; ')}`);
      return manager.call(entry, args, extra.signal);
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    return transport;
  }

  private notifyAll(): void {
    for (const session of this.sessions.values()) void session.server.sendToolListChanged().catch(() => undefined);
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

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
