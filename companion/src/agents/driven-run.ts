import type { AgentInputMessage, AgentRunEventBody } from '#shared/api/agents.js';
import { newId } from '../ids.js';
import type { RunEvents } from './events.js';
import type { LiveRuns, StartedRun } from './live-runs.js';
import { runError, type RunOutcome } from './loop.js';

/** A run whose work happens elsewhere, as it is recorded here. */
export interface DrivenRunSpec {
  agentId: string;
  /** What the run object shows as its model (the paired host's agent id, or the cloud agent's name). */
  model: string;
  input: AgentInputMessage[];
  conversationId?: string;
}

/** What a driven run may do: report events (not run.created or the terminal one) and hear its cancel. */
export interface DriveEffects {
  runId: string;
  conversationId: string;
  signal: AbortSignal;
  emit(body: AgentRunEventBody): void;
}

/** How a driven run ended. */
export type DrivenOutcome = Omit<RunOutcome, 'messages'>;

/**
 * Starts a run whose work happens elsewhere (a paired host, a cloud workspace; the dispatcher
 * picks which): `drive` reports its events and resolves with how it ended; cancel aborts its
 * signal. It is recorded, followed and cancelled like a local run; its conversation's history
 * and memory stay where the agent runs.
 */
export function startDriven(
  { runs, events }: { runs: LiveRuns; events: RunEvents },
  spec: DrivenRunSpec,
  drive: (effects: DriveEffects) => Promise<DrivenOutcome>,
): StartedRun {
  const conversationId = spec.conversationId ?? newId('conv_');
  runs.assertFree(spec.agentId, conversationId);
  const live = runs.open({ ...spec, conversationId }, true);
  const effects: DriveEffects = { runId: live.run.id, conversationId, signal: live.controller.signal, emit: (body) => events.emit(live, body) };
  const ended = (async () => {
    let outcome: DrivenOutcome;
    try {
      outcome = await drive(effects);
    } catch (error) {
      outcome = { status: 'failed', outputText: '', steps: [], usage: live.run.usage, error: runError(error) };
    }
    return runs.finish(live, outcome);
  })();
  return runs.settle(live, ended);
}
