import type { AgentInputMessage, AgentRecord, AgentRunRequest, AgentRunSummary } from '#shared/api/agents.js';
import type { ConfigDocument } from '#shared/api/config.js';
import { agentTarget, type AgentTarget, type CloudTarget, type HostTarget } from '../access/agent-target.js';
import { HearthError } from '../errors.js';
import type { Logger } from '../logger.js';
import { agentRecord, findAgent } from './definitions.js';
import type { DrivenRunSpec } from './driven-run.js';
import type { StartedRun } from './live-runs.js';
import type { AgentService } from './service.js';

/** How long listing waits for one paired host or workspace before leaving it out. */
export const LIST_TIMEOUT_MS = 5_000;

/** Agents that run somewhere else than this machine: a paired host's (channel/device/), a cloud workspace's (cloud/). */
export interface AgentSource<Target extends AgentTarget> {
  /** Every agent this source reaches now; a host or workspace that fails is left out (and logged). */
  list(): Promise<AgentRecord[]>;
  /** The agent a target names, or undefined when its host or workspace is unreachable or has no such agent. */
  find(target: Target): Promise<AgentRecord | undefined>;
  /** Starts a run there, recorded here as a driven run; refusals (not paired, not signed in, unknown agent) are thrown. */
  start(target: Target, request: AgentRunRequest): Promise<StartedRun>;
}

/** What every placed source is given. */
export interface PlacedSourceInputs {
  config(): ConfigDocument;
  /** Where a run started there is recorded here (as a driven run). */
  runs: Pick<AgentService, 'startDriven'>;
  log: Logger;
}

/**
 * A source whose agents live in places (paired hosts, cloud workspaces): it lists every place at
 * once and finds an agent in its own place; a place that fails is left out, and logged.
 */
export abstract class PlacedAgentSource<Target extends AgentTarget, Inputs extends PlacedSourceInputs> implements AgentSource<Target> {
  /** What the log says of a place that failed. */
  protected abstract readonly failed: string;

  constructor(protected readonly inputs: Inputs) {}

  /** The places to ask now. */
  protected abstract places(): string[];
  /** The place a target names. */
  protected abstract placeOf(target: Target): string;
  /** One place's agents; rejects when it fails or does not answer in time. */
  protected abstract agentsOf(place: string): Promise<AgentRecord[]>;
  abstract start(target: Target, request: AgentRunRequest): Promise<StartedRun>;

  async list(): Promise<AgentRecord[]> {
    const settled = await Promise.allSettled(this.places().map((place) => this.agentsOf(place)));
    return settled.flatMap((result) => {
      if (result.status === 'fulfilled') return result.value;
      this.inputs.log.warn({ err: result.reason }, this.failed);
      return [];
    });
  }

  async find(target: Target): Promise<AgentRecord | undefined> {
    const place = this.placeOf(target);
    if (!this.places().includes(place)) return undefined;
    try {
      return (await this.agentsOf(place)).find((agent) => agent.id === target.id);
    } catch (error) {
      this.inputs.log.warn({ err: error }, this.failed);
      return undefined;
    }
  }

  /** The run recorded here for a run there: `model` is what the run object shows as its model. */
  protected drivenSpec(target: Target, input: AgentInputMessage[], model: string, request: AgentRunRequest): DrivenRunSpec {
    return { agentId: target.id, input, model, ...(request.conversation_id ? { conversationId: request.conversation_id } : {}) };
  }
}

export interface DispatcherInputs {
  /** The configuration in force (this machine's agents). */
  config(): ConfigDocument;
  /** This machine's agent runs. */
  local: Pick<AgentService, 'start' | 'list'>;
  hosts: AgentSource<HostTarget>;
  cloud: AgentSource<CloudTarget>;
}

/**
 * The one place that decides where an agent runs. An id is read once (access/agent-target.ts):
 * `<agent>` is this machine's, `<host>/<agent>` a paired host's, `cloud:<workspace>/<agent>` a
 * cloud workspace's; listing, finding and starting go where it points. The perimeter checks a
 * key's agent scope on the same answer (`place`), so the two never read an id differently.
 */
export class AgentDispatcher {
  constructor(private readonly inputs: DispatcherInputs) {}

  /** Where an id points; undefined when it is no agent id. */
  place(id: string): AgentTarget | undefined {
    return agentTarget(id);
  }

  /** GET /agents: this machine's agents (a key scoped to one sees only that one), then paired hosts' and cloud workspaces'. */
  async list(scope: string | null | undefined): Promise<AgentRecord[]> {
    const local = this.inputs.config().agents.filter((agent) => !scope || agent.id === scope);
    if (scope) return local.map(agentRecord);
    const [hosts, cloud] = await Promise.all([this.inputs.hosts.list(), this.inputs.cloud.list()]);
    return [...local.map(agentRecord), ...hosts, ...cloud];
  }

  /** One agent as GET /agents lists it; 400 agent_not_found when nothing where it points has it. */
  async find(id: string): Promise<AgentRecord> {
    const target = this.target(id);
    if (target.kind === 'local') return agentRecord(findAgent(this.inputs.config(), target.agent));
    const found = target.kind === 'host' ? await this.inputs.hosts.find(target) : await this.inputs.cloud.find(target);
    if (!found)
      throw new HearthError('agent_not_found', `No agent has the id "${id}" (its host or workspace may be unreachable). List agents with GET /agents.`, {
        param: 'id',
      });
    return found;
  }

  /** Starts a run where the agent runs; every run is recorded here, so it is read, followed and cancelled the same way. */
  start(id: string, request: AgentRunRequest): Promise<StartedRun> {
    const target = this.target(id);
    if (target.kind === 'host') return this.inputs.hosts.start(target, request);
    if (target.kind === 'cloud') return this.inputs.cloud.start(target, request);
    return this.inputs.local.start(target.agent, request);
  }

  /** An agent's runs recorded here, newest first; an agent of this machine must exist (400 agent_not_found). */
  runs(id: string, limit: number, before?: number): { runs: AgentRunSummary[]; hasMore: boolean } {
    const target = this.target(id);
    if (target.kind === 'local') findAgent(this.inputs.config(), target.agent);
    return this.inputs.local.list(target.id, limit, before);
  }

  private target(id: string): AgentTarget {
    const target = this.place(id);
    if (!target) throw new HearthError('agent_not_found', `No agent has the id "${id}". List agents with GET /agents.`, { param: 'id' });
    return target;
  }
}
