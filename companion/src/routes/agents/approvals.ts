import type { AgentApproval, AgentApprovalDecision, AgentApprovalList } from '#shared/api/agents.js';
import type { AgentsContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { type BodySchema, pathParams, prefixedId } from '../schema.js';

export const approvalParams = pathParams({ approval_id: prefixedId('appr') });

export const decisionBody = {
  type: 'object',
  required: ['decision'],
  additionalProperties: false,
  properties: { decision: { enum: ['approve', 'deny'] }, reason: { type: 'string', maxLength: 2000 } },
} as const satisfies BodySchema<AgentApprovalDecision>;

/**
 * The owner's inbox of tool calls waiting for a decision. The perimeter guards these paths like
 * admin routes (loopback peer, no proxy headers, the local admin credential): approving a write
 * or a shell command is the machine owner's act, and no key lifts that.
 */
export const approvalRoutes: RoutePlugin<AgentsContext, 'agents'> = async (app, { agents }) => {
  app.get('/agents/approvals', async (): Promise<AgentApprovalList> => ({ object: 'list', data: agents.approvals.pending() }));

  app.post<{ Params: { approval_id: string }; Body: AgentApprovalDecision }>(
    '/agents/approvals/:approval_id',
    { schema: { params: approvalParams, body: decisionBody } },
    async (request): Promise<AgentApproval> => agents.approvals.decide(request.params.approval_id, request.body.decision, request.body.reason),
  );
};
