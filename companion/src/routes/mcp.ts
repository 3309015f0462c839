import type { FastifyInstance } from 'fastify';
import { bridgeRoutes } from './mcp/bridge.js';
import { mcpEndpointRoutes } from './mcp/endpoint.js';
import type { RouteOptions } from './plugin.js';

/** The tools family: the HTTP bridge (/mcp/tools, /mcp/call) and the MCP endpoint (/mcp). */
export async function mcpRoutes(app: FastifyInstance, options: RouteOptions): Promise<void> {
  await app.register(bridgeRoutes, options);
  await app.register(mcpEndpointRoutes, options);
}
