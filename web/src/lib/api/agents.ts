import type {
  AgentApproval,
  AgentApprovalList,
  AgentCatalogTool,
  AgentCatalogToolList,
  AgentInputMessage,
  AgentList,
  AgentRecord,
  AgentRun,
  AgentRunEvent,
  AgentRunList,
  AgentRunSummary,
} from '#shared/api/agents.js';
import type { ApplyResult, ConfigRisk } from '#shared/api/admin-config.js';
import type { AgentSettings, ConfigDocument } from '#shared/api/config.js';
import { ApiError, events, request, send } from './client';

export async function listAgents(): Promise<AgentRecord[]> {
  return (await request<AgentList>('/agents', { cache: 'no-store' })).data;
}

/** The whole tool catalog with classes (loopback only: the owner's editor). */
export async function listCatalogTools(): Promise<AgentCatalogTool[]> {
  return (await request<AgentCatalogToolList>('/admin/tools', { cache: 'no-store' })).data;
}

/** A change the companion calls high-risk: nothing was applied; send it again confirmed to apply it. */
export class RiskyChange extends Error {
  constructor(readonly risks: ConfigRisk[]) {
    super(risks.map((risk) => risk.message).join(' '));
    this.name = 'RiskyChange';
  }
}

async function apply(document: Record<string, unknown>, options: { prune?: boolean; confirm?: boolean }): Promise<ApplyResult> {
  const body = JSON.stringify({ document, prune: options.prune ?? false, confirm_high_risk: options.confirm ?? false });
  try {
    return await request<ApplyResult>('/admin/config/apply', { method: 'POST', body });
  } catch (error) {
    if (error instanceof ApiError && error.code === 'confirmation_required') {
      const risks = (await riskOf(body)) ?? [];
      throw new RiskyChange(risks);
    }
    throw error;
  }
}

/** The risks of a change, as the plan route lists them. */
async function riskOf(body: string): Promise<ConfigRisk[] | undefined> {
  const plan = await request<{ risks: ConfigRisk[] }>('/admin/config/plan', { method: 'POST', body }).catch(() => undefined);
  return plan?.risks;
}

/** Creates or replaces one agent definition (plan/apply: every problem is reported with its path). */
export function saveAgent(agent: Partial<AgentSettings> & { id: string }, confirm = false): Promise<ApplyResult> {
  return apply({ version: 1, agents: [agent] }, { confirm });
}

/** Deletes one agent: the whole configuration without it becomes the configuration (a confirmed prune). */
export async function deleteAgent(id: string): Promise<ApplyResult> {
  const current = await request<ConfigDocument>('/admin/config/export?format=json', { cache: 'no-store' });
  const document = { ...current, agents: current.agents.filter((agent) => agent.id !== id) };
  return apply(document as unknown as Record<string, unknown>, { prune: true, confirm: true });
}

/** Reads a run's SSE events; rejects with the abort reason when `signal` is aborted. */
async function* runEvents(response: Response, signal?: AbortSignal): AsyncGenerator<AgentRunEvent> {
  if (!response.body) throw new ApiError(response.status, 'invalid_response', 'The companion sent an empty stream.');
  for await (const data of events(response.body, signal)) {
    try {
      yield JSON.parse(data) as AgentRunEvent;
    } catch {
      throw new ApiError(response.status, 'invalid_response', `The companion sent an event that is not JSON: ${data.slice(0, 80)}`);
    }
  }
}

/**
 * Starts a run and streams its events. Leaving (aborting `signal`) stops listening, not the run.
 * `input` is the task, or earlier turns and then the new one (a conversation started again from
 * history the caller kept).
 */
export async function* startRun(
  agentId: string,
  input: string | AgentInputMessage[],
  options: { conversationId?: string; signal?: AbortSignal } = {},
): AsyncGenerator<AgentRunEvent> {
  const response = await send(`/agents/${encodeURIComponent(agentId)}/run`, {
    method: 'POST',
    headers: { accept: 'text/event-stream' },
    body: JSON.stringify({ input, stream: true, ...(options.conversationId ? { conversation_id: options.conversationId } : {}) }),
    signal: options.signal,
  });
  yield* runEvents(response, options.signal);
}

/** Replays a run's events after `after` and follows it until it ends. */
export async function* followRun(runId: string, after = 0, signal?: AbortSignal): AsyncGenerator<AgentRunEvent> {
  const response = await send(`/agents/runs/${encodeURIComponent(runId)}/events?after=${after}`, { headers: { accept: 'text/event-stream' }, signal });
  yield* runEvents(response, signal);
}

export function getRun(runId: string): Promise<AgentRun> {
  return request<AgentRun>(`/agents/runs/${encodeURIComponent(runId)}`, { cache: 'no-store' });
}

export async function listRuns(agentId: string, limit = 20): Promise<AgentRunSummary[]> {
  return (await request<AgentRunList>(`/agents/${encodeURIComponent(agentId)}/runs?limit=${limit}`, { cache: 'no-store' })).data;
}

export function cancelRun(runId: string): Promise<AgentRun> {
  return request<AgentRun>(`/agents/runs/${encodeURIComponent(runId)}/cancel`, { method: 'POST' });
}

/** Pending approvals (loopback and the owner's credential, like admin routes). */
export async function listApprovals(signal?: AbortSignal): Promise<AgentApproval[]> {
  return (await request<AgentApprovalList>('/agents/approvals', { cache: 'no-store', signal })).data;
}

export function decideApproval(id: string, decision: 'approve' | 'deny', reason?: string): Promise<AgentApproval> {
  return request<AgentApproval>(`/agents/approvals/${encodeURIComponent(id)}`, {
    method: 'POST',
    body: JSON.stringify({ decision, ...(reason ? { reason } : {}) }),
  });
}
