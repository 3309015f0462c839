import { requireLoopback } from '../../http/loopback.js';
import type { MemoryIndexResponse, MemoryPurgeResponse } from '#shared/api/memory.js';
import { assertAgentScope } from './scope.js';
import { agentParams } from './fields.js';
import type { MemoryContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';

type AgentRoute = { Params: { agent_id: string } };

/** docs/memory.md rule 6: rebuild, remove and purge are distinct operations, loopback only. */
export const memoryIndexRoutes: RoutePlugin<MemoryContext, 'memory'> = async (app, { memory }) => {
  app.addHook('preHandler', requireLoopback);
  app.addHook('preHandler', async (request) => assertAgentScope(request, (request.params as { agent_id: string }).agent_id));

  app.post<AgentRoute>('/memory/agents/:agent_id/index/rebuild', { schema: { params: agentParams } }, async (request): Promise<MemoryIndexResponse> =>
    memory.rebuildIndex(request.params.agent_id),
  );

  app.delete<AgentRoute>('/memory/agents/:agent_id/index', { schema: { params: agentParams } }, async (request): Promise<MemoryIndexResponse> =>
    memory.removeIndex(request.params.agent_id),
  );

  app.delete<AgentRoute>('/memory/agents/:agent_id', { schema: { params: agentParams } }, async (request): Promise<MemoryPurgeResponse> =>
    memory.purge(request.params.agent_id),
  );
};
