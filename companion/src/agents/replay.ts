import type { AgentRunEvent } from '#shared/api/agents.js';
import type { RunStore } from './store.js';

/** Most events one answer of GET /agents/runs/{id}/events holds; `has_more` says when to ask again. */
export const EVENT_PAGE = 1000;

const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);

export function isTerminal(event: AgentRunEvent): boolean {
  return TERMINAL.has(event.type);
}

/** Stored events read and handed on at a time; the event loop serves other work between pages. */
export const REPLAY_PAGE = 256;

/** A run of this process that a follower can join. */
export interface Joinable {
  listeners: Set<(event: AgentRunEvent) => void>;
}

export interface Following {
  /** Stops handing events on (the replay stops at its next event). */
  stop(): void;
  /** Settles when the stored events have been handed on: true while more can come (the run goes on in this process). */
  replayed: Promise<boolean>;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Hands on a run's stored events after `after`, page by page with the event loop free in between,
 * then its live events. The follower joins the live run first and holds what arrives during the
 * replay, so no event falls between the two and none comes twice (each is handed on once, in
 * sequence order).
 */
export function followRun(
  store: RunStore,
  runId: string,
  after: number,
  live: () => Joinable | undefined,
  listener: (event: AgentRunEvent) => void,
): Following {
  const joined = live();
  const held: AgentRunEvent[] = [];
  let replaying = true;
  let stopped = false;
  let last = after;
  const pass = (event: AgentRunEvent) => {
    if (stopped || event.sequence <= last) return;
    last = event.sequence;
    listener(event);
  };
  const relay = (event: AgentRunEvent) => (replaying ? held.push(event) : pass(event));
  joined?.listeners.add(relay);
  const stop = () => {
    stopped = true;
    joined?.listeners.delete(relay);
  };
  const replayed = (async () => {
    for (;;) {
      const page = store.events(runId, last, REPLAY_PAGE);
      for (const event of page) pass(event);
      if (stopped) return false;
      if (page.length < REPLAY_PAGE) break;
      await nextTurn();
    }
    // Read to the end in this turn: what came during the replay is in `held`, what comes next goes straight on.
    replaying = false;
    for (const event of held.splice(0)) pass(event);
    if (joined && live() === joined) return true;
    stop();
    return false;
  })();
  replayed.catch(stop);
  return { stop, replayed };
}
