import type { FastifyInstance } from 'fastify';
import { approvalRoutes } from './agents/approvals.js';
import { agentDefinitionRoutes } from './agents/definitions.js';
import { runRoutes } from './agents/runs.js';
import type { RouteOptions } from './plugin.js';

/** The agents family: definitions, runs and their events, and the owner's approvals. */
export async function agentRoutes(app: FastifyInstance, options: RouteOptions): Promise<void> {
  await app.register(agentDefinitionRoutes, options);
  await app.register(runRoutes, options);
  await app.register(approvalRoutes, options);
}
