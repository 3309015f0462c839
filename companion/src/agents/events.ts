import type { AgentRunEvent, AgentRunEventBody, RunArtifact } from '#shared/api/agents.js';
import { HearthError } from '../errors.js';
import type { Logger } from '../logger.js';
import { EVENT_PAGE, followRun, type Following, type Joinable } from './replay.js';
import type { RunStore } from './store.js';

/** A run of this process as its events see it: its id, the last number given, its live listeners. */
export interface Numbered extends Joinable {
  run: { id: string };
  sequence: number;
}

/**
 * A run's events: each one numbered in its run, written, then handed to the run's live listeners;
 * read back a page at a time, or replayed and followed live (replay.ts).
 */
export class RunEvents {
  constructor(
    private readonly store: RunStore,
    private readonly log: Logger,
  ) {}

  /** Numbers, writes and hands on one event of a live run; a listener that throws is logged and the others still hear it. */
  emit(live: Numbered, body: AgentRunEventBody): void {
    const event = { ...body, sequence: ++live.sequence, run_id: live.run.id } as AgentRunEvent;
    this.store.appendEvent(event);
    for (const listener of live.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.log.warn({ err: error }, 'an agent run listener failed');
      }
    }
  }

  /** A page of a run's events after `after`, oldest first. */
  page(runId: string, after: number, limit = EVENT_PAGE): AgentRunEvent[] {
    this.assertRun(runId);
    return this.store.events(runId, after, limit);
  }

  /**
   * Hands on the stored events after `after` (in pages, the event loop free between them), then
   * follows the run live (`live` finds it while it runs in this process); `replayed` says whether
   * more events can come (false once it has ended).
   */
  follow(runId: string, after: number, live: () => Joinable | undefined, listener: (event: AgentRunEvent) => void): Following {
    this.assertRun(runId);
    return followRun(this.store, runId, after, live, listener);
  }

  /** The latest stored form of one artifact of a run, as its last `artifact.created` event gave it. */
  artifact(runId: string, artifactId: string): RunArtifact {
    let found: RunArtifact | undefined;
    for (const event of this.store.eventsOfType(runId, 'artifact.created'))
      if (event.type === 'artifact.created' && event.artifact.artifact_id === artifactId) found = event.artifact;
    if (!found) throw new HearthError('artifact_not_found', `Run ${runId} has no artifact "${artifactId}".`);
    return found;
  }

  private assertRun(runId: string): void {
    if (!this.store.exists(runId)) throw new HearthError('run_not_found', `No agent run has the id "${runId}".`);
  }
}
