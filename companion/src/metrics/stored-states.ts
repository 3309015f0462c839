import type { AgentRunStatus } from '#shared/api/agents.js';
import type { ImageJobStatus } from '#shared/api/images.js';
import type { MediaJobStatus } from '#shared/api/media.js';
import type { Db } from '../store/database.js';

/**
 * How many agent runs, image jobs and hosted media jobs the database holds in each state: the
 * records the runs and jobs routes answer from, counted when /metrics is read (one grouped count
 * per table). Every state of the wire types is reported, 0 when none is in it.
 */
export interface StoredStates {
  agentRuns: Record<string, number>;
  imageJobs: Record<string, number>;
  mediaJobs: Record<string, number>;
}

const AGENT_RUN_STATES: readonly AgentRunStatus[] = ['running', 'awaiting_approval', 'completed', 'failed', 'cancelled'];
const IMAGE_JOB_STATES: readonly ImageJobStatus[] = ['queued', 'preparing', 'generating', 'completed', 'failed', 'cancelled'];
const MEDIA_JOB_STATES: readonly MediaJobStatus[] = ['submitting', 'queued', 'in_progress', 'downloading', 'completed', 'failed'];

export function storedStates(db: Db): StoredStates {
  const counts = (table: string, states: readonly string[]): Record<string, number> => {
    const found: Record<string, number> = Object.fromEntries(states.map((state) => [state, 0]));
    const rows = db.prepare<[], { status: string; count: number }>(`SELECT status, COUNT(*) AS count FROM ${table} GROUP BY status`).all();
    for (const row of rows) if (row.status in found) found[row.status] = row.count;
    return found;
  };
  return {
    agentRuns: counts('agent_runs', AGENT_RUN_STATES),
    imageJobs: counts('image_jobs', IMAGE_JOB_STATES),
    mediaJobs: counts('media_jobs', MEDIA_JOB_STATES),
  };
}
