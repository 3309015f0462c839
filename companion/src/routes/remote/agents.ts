import type { FastifyInstance } from 'fastify';
import type { AgentList } from '#shared/api/agents.js';
import type { RouteOptions } from '../plugin.js';

/** GET /agents on the secure channel: the agents this device was granted, nothing else. */
export async function deviceAgentRoutes(app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.get('/agents', async (request): Promise<AgentList> => {
    const granted = new Set(request.device?.agents ?? []);
    const agents = services.config.agents.filter((agent) => granted.has(agent.id));
    return {
      object: 'list',
      data: agents.map((agent) => ({ id: agent.id, object: 'agent', name: agent.name ?? agent.id, model: agent.model ?? null, tools: agent.tools })),
    };
  });
}
