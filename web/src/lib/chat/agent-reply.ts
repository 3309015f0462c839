/**
 * A chat with an agent: each turn is an agent run (`POST /agents/{id}/run`, streamed) that
 * continues the agent's conversation on the companion, so memory is recalled into it and the
 * exchange is remembered, tools run under the agent's policy and approvals wait for the owner.
 */
import { cancelRun, startRun } from '$lib/api/agents';
import { ApiError } from '$lib/api/client';
import { applyEvent, type RunView } from '$lib/stores/agent-runs';
import type { AgentInputMessage, AgentRun } from '#shared/api/agents.js';

/** `agent:helper` is the chat's key for talking to the agent "helper". */
export const AGENT_PREFIX = 'agent:';

export function agentOfKey(key: string): string | null {
  return key.startsWith(AGENT_PREFIX) && key.length > AGENT_PREFIX.length ? key.slice(AGENT_PREFIX.length) : null;
}

export interface AgentTurn {
  agentId: string;
  /** The new message, or (a conversation started again) the kept history ending with it. */
  input: string | AgentInputMessage[];
  /** Continue this conversation of the agent's; none starts a new one. */
  conversationId?: string;
  signal: AbortSignal;
  /** The run as it goes: steps, tool calls, approvals waiting. */
  onView(view: RunView): void;
  /** A tool call started or stopped waiting for the owner. */
  onApproval?(): void;
}

/** A run that ended without completing, with the companion's reason (`code`: e.g. context_length_exceeded). */
export class AgentRunFailed extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly run: AgentRun,
  ) {
    super(message);
    this.name = 'AgentRunFailed';
  }
}

/** Runs one turn and resolves with the completed run; a stopped turn cancels the run on the companion. */
export async function runAgentTurn(turn: AgentTurn): Promise<AgentRun> {
  let view: RunView | null = null;
  let ended: AgentRun | null = null;
  try {
    for await (const event of startRun(turn.agentId, turn.input, { conversationId: turn.conversationId, signal: turn.signal })) {
      view = applyEvent(view, event);
      turn.onView(view);
      if (event.type === 'tool_call.approval_required' || event.type === 'tool_call.completed') turn.onApproval?.();
      if (event.type === 'run.completed' || event.type === 'run.cancelled') ended = event.run;
      if (event.type === 'run.failed') throw new AgentRunFailed(event.error.code, event.error.message, event.run);
    }
  } catch (error) {
    // Stopping the reply stops the run, not only the listening.
    if (turn.signal.aborted && view) await cancelRun(view.id).catch(() => undefined);
    throw error;
  }
  if (!ended) throw new ApiError(0, 'stream_interrupted', 'The run stopped before it was complete.');
  if (ended.status === 'cancelled') throw new DOMException('The run was cancelled.', 'AbortError');
  return ended;
}

/** The text of an agent's reply so far: what its last step wrote. */
export function replyText(view: RunView): string {
  return view.output || (view.steps.at(-1)?.text ?? '');
}
