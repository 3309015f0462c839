import type { FastifyInstance } from 'fastify';
import type { AgentList, AgentRecord } from '#shared/api/agents.js';
import type { RouteOptions } from '../plugin.js';
import { anyAgentParams } from './schemas.js';

/**
 * The agents: this machine's, paired hosts' and cloud workspaces' (agents/dispatcher.ts decides
 * which an id names). A key scoped to one agent sees only that one; the perimeter refuses it any other id.
 */
export async function agentDefinitionRoutes(app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.get('/agents', async (request): Promise<AgentList> => ({ object: 'list', data: await services.dispatcher.list(request.grant?.agent) }));

  app.get<{ Params: { id: string } }>('/agents/:id', { schema: { params: anyAgentParams } }, async (request): Promise<AgentRecord> =>
    services.dispatcher.find(request.params.id),
  );
}
