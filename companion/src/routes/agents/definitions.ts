import type { FastifyInstance } from 'fastify';
import type { AgentList, AgentRecord } from '#shared/api/agents.js';
import { agentRecord, findAgent } from '../../agents/definitions.js';
import { AgentSources } from '../../remote/agent-sources.js';
import type { RouteOptions } from '../plugin.js';
import { anyAgentParams } from './schemas.js';

/** The configured agents (a key scoped to one agent sees only that one; the perimeter refuses it any other id). */
export async function agentDefinitionRoutes(app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.get('/agents', async (request): Promise<AgentList> => {
    const only = request.grant?.agent;
    const local = services.config.agents.filter((agent) => !only || agent.id === only).map(agentRecord);
    // A key scoped to one agent sees that one; agents on paired hosts and in cloud workspaces are listed for the rest.
    return { object: 'list', data: only ? local : [...local, ...(await services.agentSources.list())] };
  });

  app.get<{ Params: { id: string } }>('/agents/:id', { schema: { params: anyAgentParams } }, async (request): Promise<AgentRecord> =>
    AgentSources.elsewhere(request.params.id) ? services.agentSources.find(request.params.id) : agentRecord(findAgent(services.config, request.params.id)),
  );
}
