import type { AgentCatalogToolList } from '#shared/api/agents.js';
import type { AdminContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';

/**
 * The whole tool catalog as the agent editor needs it: Hearth's built-in tools (host-only ones
 * included) and every connected service's tools, with their class. Loopback only: external
 * clients see their permitted part through GET /mcp/tools.
 */
export const toolAdminRoutes: RoutePlugin<AdminContext, 'mcp'> = async (app, { mcp }) => {
  app.get('/admin/tools', async (): Promise<AgentCatalogToolList> => ({
    object: 'list',
    data: mcp.entries().map((entry) => ({
      name: entry.name,
      description: entry.description,
      class: entry.class,
      service: entry.service,
      host_only: entry.hostOnly,
      input_schema: entry.inputSchema,
    })),
  }));
};
