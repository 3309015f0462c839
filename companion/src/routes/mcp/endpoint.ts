import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLoopbackBind } from '../../access/hosts.js';
import { McpEndpoint } from '../../mcp/endpoint.js';
import type { ServerSettings } from '#shared/api/config.js';
import type { McpContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';

/**
 * Hearth's MCP server endpoint: Streamable HTTP at /mcp (POST messages, GET the notification
 * stream, DELETE a session), serving the same permitted catalog as the bridge under the same
 * keys. The perimeter has already checked Host, Origin and the key's `tools` scope.
 */
export const mcpEndpointRoutes: RoutePlugin<McpContext, 'version' | 'config' | 'mcp'> = async (app, { version, config, mcp }) => {
  const endpoint = new McpEndpoint({ manager: mcp, config, version });
  app.addHook('onClose', async () => endpoint.close());

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const protection = rebindingProtection(request, config().server);
    // Headers set by the perimeter (CORS) must survive hijacking.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value as string | number | string[]);
    reply.hijack();
    try {
      await endpoint.handle({ req: request.raw, res: reply.raw, body: request.body, grant: request.grant, ...protection });
    } catch (error) {
      request.log.error({ err: error }, 'MCP endpoint failed');
      if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'application/json' });
      if (!reply.raw.writableEnded) reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
    }
  };
  app.route({ method: ['GET', 'POST', 'DELETE'], url: '/mcp', bodyLimit: config().server.limits.tools_body_mb * 1024 * 1024, handler });
};

/**
 * The SDK's own DNS-rebinding check, on top of the perimeter's and stricter: while Hearth listens
 * on loopback, only the Host values 127.0.0.1, localhost and [::1] (and server.allowed_hosts)
 * with this port, and only Origins of those or of server.cors.origins. Beyond loopback, keys are
 * required, which is the defence there.
 */
function rebindingProtection(request: FastifyRequest, server: ServerSettings): { allowedHosts?: string[]; allowedOrigins?: string[] } {
  const address = request.server.server.address();
  const bound = typeof address === 'object' && address ? address.address : '127.0.0.1';
  if (!isLoopbackBind(bound)) return {};
  const port = typeof address === 'object' && address ? address.port : portOf(request.headers.host);
  const names = ['127.0.0.1', 'localhost', '[::1]', ...server.allowed_hosts];
  const hosts = names.flatMap((name) => (port === 80 ? [name, `${name}:80`] : [`${name}:${port}`]));
  const cors = server.cors.origins;
  return { allowedHosts: hosts, ...(cors.includes('*') ? {} : { allowedOrigins: [...hosts.map((host) => `http://${host}`), ...cors] }) };
}

function portOf(host: string | undefined): number {
  const match = /:(\d+)$/.exec(host ?? '');
  return match ? Number(match[1]) : 80;
}
