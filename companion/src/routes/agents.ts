import { approvalRoutes } from './agents/approvals.js';
import { agentDefinitionRoutes } from './agents/definitions.js';
import { runRoutes } from './agents/runs.js';
import type { AgentsContext } from './contexts.js';
import type { RoutePlugin } from './plugin.js';

/** The agents family: definitions, runs and their events, and the owner's approvals. */
export const agentRoutes: RoutePlugin<AgentsContext> = async (app, context) => {
  await app.register(agentDefinitionRoutes, context);
  await app.register(runRoutes, context);
  await app.register(approvalRoutes, context);
};
