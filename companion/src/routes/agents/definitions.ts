import type { AgentList, AgentRecord } from '#shared/api/agents.js';
import type { AgentsContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { ANY_AGENT_ID_PATTERN } from '../../access/agent-target.js';
import { pathParams } from '../schema.js';

/** An agent: a local id, `<host>/<agent>` on a paired host, or `cloud:<workspace>/<agent>`. */
export const anyAgentParams = pathParams({ id: { type: 'string', pattern: ANY_AGENT_ID_PATTERN } });

/**
 * The agents: this machine's, paired hosts' and cloud workspaces' (agents/dispatcher.ts decides
 * which an id names). A key scoped to one agent sees only that one; the perimeter refuses it any other id.
 */
export const agentDefinitionRoutes: RoutePlugin<AgentsContext, 'dispatcher'> = async (app, { dispatcher }) => {
  app.get('/agents', async (request): Promise<AgentList> => ({ object: 'list', data: await dispatcher.list(request.grant?.agent) }));

  app.get<{ Params: { id: string } }>('/agents/:id', { schema: { params: anyAgentParams } }, async (request): Promise<AgentRecord> =>
    dispatcher.find(request.params.id),
  );
};
