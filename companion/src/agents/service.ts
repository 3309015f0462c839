import type { AgentRun, AgentRunEvent, AgentRunRequest, AgentRunSummary, RunArtifact } from '#shared/api/agents.js';
import type { AgentSettings, ConfigDocument } from '#shared/api/config.js';
import { HearthError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Db } from '../store/database.js';
import { ApprovalBroker } from './approvals.js';
import { startDriven, type DriveEffects, type DrivenOutcome, type DrivenRunSpec } from './driven-run.js';
import { RunEvents } from './events.js';
import { LiveRuns, type StartedRun } from './live-runs.js';
import { LocalRuns, type ToolSource } from './local-run.js';
import { MemoryLink, type AgentMemory } from './memory-link.js';
import type { ModelSources } from './model.js';
import { endLeftovers, recoverRuns } from './recovery.js';
import { EVENT_PAGE, type Following } from './replay.js';
import { RunStore } from './store.js';

export interface AgentServiceOptions {
  db: Db;
  /** The configuration in force, read at each run. */
  config(): ConfigDocument;
  models: ModelSources;
  /** The tool catalog and the MCP services behind it. */
  tools: ToolSource;
  memory: AgentMemory;
  log: Logger;
}

/**
 * Agent runs, put together: local runs (local-run.ts) and runs driven from elsewhere
 * (driven-run.ts) share one registry of live runs and the conversations they hold
 * (live-runs.ts), one event log (events.ts) and one store; memory is reached through
 * memory-link.ts only. At start it marks the runs a previous process left unfinished as interrupted.
 */
export class AgentService {
  readonly approvals: ApprovalBroker;
  readonly store: RunStore;
  /** Ending what shell calls of a crashed process left running (started by `recover`). */
  leftovers: Promise<number> = Promise.resolve(0);
  private readonly eventLog: RunEvents;
  private readonly runs: LiveRuns;
  private readonly memory: MemoryLink;
  private readonly local: LocalRuns;

  constructor(private readonly options: AgentServiceOptions) {
    this.store = new RunStore(options.db);
    this.approvals = new ApprovalBroker(options.db);
    this.eventLog = new RunEvents(this.store, options.log);
    this.runs = new LiveRuns(this.store, this.eventLog, options.log);
    this.memory = new MemoryLink(options.memory, this.store, options.config, options.log);
    this.local = new LocalRuns({ ...options, memory: this.memory, approvals: this.approvals, store: this.store, runs: this.runs, events: this.eventLog });
  }

  /**
   * Runs left in flight by a process that ended are failed (`interrupted`), their unfinished
   * tool calls closed and their approvals withdrawn; what their shell calls left running is
   * ended in the background (`leftovers`).
   */
  recover(): number {
    const stale = recoverRuns(this.store, this.options.log);
    this.approvals.cancelOrphans();
    this.leftovers = endLeftovers(this.store, this.options.log);
    return stale;
  }

  /** Starts a run of one of this machine's agents; problems found before it starts (unknown agent, no model, busy conversation) are thrown. */
  start(agentId: string, request: AgentRunRequest): Promise<StartedRun> {
    return this.local.start(agentId, request);
  }

  /** Starts a run whose work happens elsewhere (driven-run.ts). */
  startDriven(spec: DrivenRunSpec, drive: (effects: DriveEffects) => Promise<DrivenOutcome>): StartedRun {
    return startDriven({ runs: this.runs, events: this.eventLog }, spec, drive);
  }

  /** Refuses a second run in a conversation that has one under way (asked before work elsewhere is started). */
  assertConversationFree(agentId: string, conversationId: string | undefined): void {
    if (conversationId !== undefined) this.runs.assertFree(agentId, conversationId);
  }

  /** The run as stored; a run of this process reflects its latest step. */
  get(runId: string): AgentRun {
    const run = this.store.get(runId);
    if (!run) throw new HearthError('run_not_found', `No agent run has the id "${runId}".`);
    return run;
  }

  list(agentId: string, limit: number, before?: number): { runs: AgentRunSummary[]; hasMore: boolean } {
    return this.store.list(agentId, limit, before);
  }

  /** The latest stored form of one artifact of a run, as its last `artifact.created` event gave it. */
  artifact(runId: string, artifactId: string): RunArtifact {
    return this.eventLog.artifact(runId, artifactId);
  }

  /** A page of a run's events after `after`, oldest first. */
  events(runId: string, after: number, limit = EVENT_PAGE): AgentRunEvent[] {
    return this.eventLog.page(runId, after, limit);
  }

  /** Replays a run's stored events after `after`, then follows it live while it runs here (events.ts). */
  follow(runId: string, after: number, listener: (event: AgentRunEvent) => void): Following {
    return this.eventLog.follow(runId, after, () => this.runs.get(runId), listener);
  }

  /** Cancels a run of this process and resolves with it once it has stopped; a finished run comes back as it is. */
  async cancel(runId: string): Promise<AgentRun> {
    return (await this.runs.cancel(runId)) ?? this.get(runId);
  }

  /** Ends every run of this process (they are recorded as interrupted); waits a few seconds at most. */
  close(): Promise<void> {
    return this.runs.close(this.leftovers);
  }

  /** An API exchange named by X-Service-Agent-Id: a turn of that agent's conversation, and a memory signal. */
  attribute(agent: AgentSettings, conversationId: string, user: string, assistant: string): void {
    this.memory.attribute(agent, conversationId, user, assistant);
  }
}
