import { approvalRoutes } from './agents/approvals.js';
import { agentDefinitionRoutes } from './agents/definitions.js';
import { runRoutes } from './agents/runs.js';
import type { AgentsContext } from './contexts.js';
import { registerParts, type RoutePlugin } from './plugin.js';

/** The agents family: definitions, runs and their events, and the owner's approvals. */
export const agentRoutes: RoutePlugin<AgentsContext> = async (app, context) => {
  await registerParts(app, context, [agentDefinitionRoutes, runRoutes, approvalRoutes]);
};
