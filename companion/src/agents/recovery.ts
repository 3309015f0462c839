import type { AgentRun } from '#shared/api/agents.js';
import { runFailure } from '../failures.js';
import { unixSeconds } from '../ids.js';
import type { Logger } from '../logger.js';
import type { RunStore } from './store.js';
import { endMarked } from '../tools/builtin/containment.js';

const UNFINISHED_CALL = 'Error: Hearth stopped during this call, so it did not finish and its result never reached the model.';

/**
 * Runs left in flight by a process that ended are failed (`interrupted`): each tool call that
 * had not finished is closed as an error (with a tool_call.completed), and the event log is
 * closed by a run.failed. Answers how many runs were found.
 */
export function recoverRuns(store: RunStore, log: Logger): number {
  const stale = store.inFlight();
  for (const run of stale) {
    let sequence = store.lastSequence(run.id);
    for (const step of run.steps)
      step.tool_calls.forEach((call, position) => {
        if (call.output !== null) return;
        Object.assign(call, { output: UNFINISHED_CALL, is_error: true });
        store.putCall(run.id, step.index, position, call);
        store.appendEvent({
          type: 'tool_call.completed',
          sequence: ++sequence,
          run_id: run.id,
          step: step.index,
          call_id: call.call_id,
          name: call.name,
          output: UNFINISHED_CALL,
          is_error: true,
        });
      });
    const error = runFailure('interrupted');
    const failed: AgentRun = { ...run, status: 'failed', error, completed_at: unixSeconds() };
    store.update(failed);
    store.appendEvent({ type: 'run.failed', sequence: sequence + 1, run_id: run.id, run: failed, error });
  }
  if (stale.length > 0) log.warn({ runs: stale.map((run) => run.id) }, 'agent runs interrupted by the previous stop were marked failed');
  return stale.length;
}

/** Ends every process still marked by a shell call that the last process recorded as under way; answers how many. */
export async function endLeftovers(store: RunStore, log: Logger): Promise<number> {
  try {
    const markers = store.processes();
    if (markers.length === 0) return 0;
    const killed = await endMarked(markers);
    for (const marker of markers) store.removeProcess(marker);
    if (killed > 0) log.warn({ processes: killed }, 'ended processes that shell calls of the previous run of Hearth left running');
    return killed;
  } catch (error) {
    log.warn({ err: error }, 'ending what earlier shell calls left running failed');
    return 0;
  }
}
