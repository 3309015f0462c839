import { clientGone } from '../../http/sse.js';
import { callTool, listTools } from '../../mcp/bridge.js';
import type { BridgeCallRequest, BridgeCallResult, BridgeToolList } from '#shared/api/bridge.js';
import type { McpContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import type { BodySchema } from '../schema.js';

export const callBody = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: { name: { type: 'string', minLength: 1, maxLength: 256 }, arguments: { type: 'object' } },
} as const satisfies BodySchema<BridgeCallRequest>;

/**
 * The tool bridge: GET /mcp/tools lists the tools this caller may use,
 * POST /mcp/call runs one. Not an MCP transport: MCP clients use /mcp (routes/mcp/endpoint.ts).
 */
export const bridgeRoutes: RoutePlugin<McpContext, 'config' | 'mcp' | 'shutdown'> = async (app, { config, mcp, shutdown }) => {
  const bodyLimit = config().server.limits.tools_body_mb * 1024 * 1024;

  app.get('/mcp/tools', async (request): Promise<BridgeToolList> => ({
    tools: listTools({ manager: mcp, config: config(), grant: request.grant }),
  }));

  app.post<{ Body: BridgeCallRequest }>('/mcp/call', { bodyLimit, schema: { body: callBody } }, async (request, reply): Promise<BridgeCallResult> => {
    // A client that goes away cancels the call at the service.
    const signal = clientGone(request, reply, shutdown);
    const caller = { manager: mcp, config: config(), grant: request.grant };
    return (await callTool(caller, request.body.name, request.body.arguments ?? {}, signal)) as BridgeCallResult;
  });
};
