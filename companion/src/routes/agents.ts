import type { FastifyInstance } from 'fastify';
import type { AgentList } from '#shared/api/agents.js';
import type { RouteOptions } from './plugin.js';

/** The agents family: the configured agents (a key scoped to one agent sees only that one). */
export async function agentRoutes(app: FastifyInstance, options: RouteOptions): Promise<void> {
  app.get('/agents', async (request): Promise<AgentList> => {
    const only = request.grant?.agent;
    const agents = options.services.config.agents.filter((agent) => !only || agent.id === only);
    return {
      object: 'list',
      data: agents.map((agent) => ({ id: agent.id, object: 'agent', name: agent.name ?? agent.id, model: agent.model ?? null, tools: agent.tools })),
    };
  });
}
