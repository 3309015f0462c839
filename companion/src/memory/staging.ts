import { randomUUID } from 'node:crypto';
import { STAGED_PREFIX } from './fts-namespaces.js';

/**
 * Large ingests are written in chunks that each commit and then yield to the event loop, so
 * the server keeps answering. Until the last chunk is in, the turns belong to a staged agent id
 * (`~<uuid>~<agent>`), which no agent id can equal (agent ids never contain "~"): no search,
 * listing, distillation or embedding sees them. Publishing renames them to the agent in one
 * small transaction, so the ingest becomes visible whole; a failed ingest is removed, and one a
 * killed process left behind is removed when memory starts again.
 */

/** Turns per chunk; a chunk is one transaction between two yields. */
export const INGEST_CHUNK_TURNS = 250;

export function stagedId(agentId: string): string {
  return `${STAGED_PREFIX}${randomUUID()}${STAGED_PREFIX}${agentId}`;
}

/** The agent a staged id belongs to. */
export function agentOfStaged(staged: string): string {
  return staged.slice(staged.indexOf(STAGED_PREFIX, STAGED_PREFIX.length) + STAGED_PREFIX.length);
}

/** Lets timers, I/O and other requests run before the next chunk. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
