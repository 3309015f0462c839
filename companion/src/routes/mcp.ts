import { bridgeRoutes } from './mcp/bridge.js';
import { mcpEndpointRoutes } from './mcp/endpoint.js';
import type { McpContext } from './contexts.js';
import { registerParts, type RoutePlugin } from './plugin.js';

/** The tools family: the HTTP bridge (/mcp/tools, /mcp/call) and the MCP endpoint (/mcp). */
export const mcpRoutes: RoutePlugin<McpContext> = async (app, context) => {
  await registerParts(app, context, [bridgeRoutes, mcpEndpointRoutes]);
};
