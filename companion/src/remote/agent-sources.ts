import type { AgentRecord, AgentRun, AgentRunRequest } from '#shared/api/agents.js';
import type { ConfigDocument } from '#shared/api/config.js';
import { inputMessages } from '../agents/definitions.js';
import { agentTarget } from '../access/agent-target.js';
import { HearthError } from '../errors.js';
import type { AgentService } from '../agents/service.js';
import type { CloudAgents } from '../cloud/agents.js';
import { cloudRecord, driveCloudRun } from '../cloud/run.js';
import type { CloudSignIn } from '../cloud/sign-in.js';
import type { Logger } from '../logger.js';
import type { RemoteHosts } from './hosts.js';
import { followRemoteRun, openRemoteRun, remoteRecord } from './proxy-run.js';

export interface AgentSourcesInputs {
  config(): ConfigDocument;
  agents: AgentService;
  hosts: RemoteHosts;
  cloud: { signIn: CloudSignIn; agents: CloudAgents };
  /** `<data-dir>/artifacts`, where cloud runs keep their artifacts. */
  artifacts: string;
  log: Logger;
}

/** How long listing waits for one paired host or workspace before leaving it out. */
const LIST_TIMEOUT_MS = 5_000;

/**
 * Agents that run elsewhere, next to the local ones: a paired host's granted agents as
 * `<host>/<agent>` (run over mutual TLS, their events proxied), and a cloud workspace's published
 * agents as `cloud:<workspace>/<agent>` (run as A2A tasks). Their runs are recorded here like
 * local ones, so reading, following and cancelling them is the same.
 */
export class AgentSources {
  constructor(private readonly inputs: AgentSourcesInputs) {}

  /** Whether an id names an agent elsewhere (parsed as the perimeter parses it: agentTarget). */
  static elsewhere(id: string): boolean {
    return agentTarget(id)?.kind !== 'local';
  }

  /** Every reachable host's and signed-in workspace's agents; one that fails is left out (and logged). */
  async list(): Promise<AgentRecord[]> {
    const { hosts, cloud } = this.inputs;
    const config = this.inputs.config();
    const remote = config.remote_hosts.map((host) =>
      hosts.agents(host.name, AbortSignal.timeout(LIST_TIMEOUT_MS)).then((records) => records.map((record) => remoteRecord(host.name, record))),
    );
    const published = config.cloud_workspaces
      .filter((workspace) => cloud.signIn.status(workspace.name).state === 'signed_in')
      .map((workspace) => withTimeout(cloud.agents.list(workspace.name)).then((agents) => agents.map(cloudRecord)));
    const settled = await Promise.allSettled([...remote, ...published]);
    return settled.flatMap((result) => {
      if (result.status === 'fulfilled') return result.value;
      this.inputs.log.warn({ err: result.reason }, 'agents of a paired host or cloud workspace could not be listed');
      return [];
    });
  }

  /** One agent elsewhere as GET /agents lists it; 400 agent_not_found when no reachable host or workspace has it. */
  async find(id: string): Promise<AgentRecord> {
    const found = (await this.list()).find((agent) => agent.id === id);
    if (!found)
      throw new HearthError('agent_not_found', `No agent has the id "${id}" (its host or workspace may be unreachable). List agents with GET /agents.`, {
        param: 'id',
      });
    return found;
  }

  /** Starts a run of an agent elsewhere; refusals (unknown host or agent, changed certificate, not signed in) are thrown. */
  async start(id: string, request: AgentRunRequest): Promise<{ run: AgentRun; finished: Promise<AgentRun> }> {
    const input = inputMessages(request.input);
    const spec = { agentId: id, input, ...(request.conversation_id ? { conversationId: request.conversation_id } : {}) };
    const target = agentTarget(id);
    if (target?.kind === 'cloud') {
      const agent = await this.inputs.cloud.agents.find(id);
      return this.inputs.agents.startDriven({ ...spec, model: agent.card.name }, (effects) =>
        driveCloudRun(this.inputs.cloud, agent, input, this.inputs.artifacts, request.conversation_id, effects),
      );
    }
    if (target?.kind !== 'host') return this.inputs.agents.start(id, request);
    const client = this.inputs.hosts.client(target.host);
    // Refused here first, so a busy conversation never starts a run on the host that nobody follows.
    this.inputs.agents.assertConversationFree(id, request.conversation_id);
    const response = await openRemoteRun(client, target.host, target.agent, { ...request, input });
    try {
      return this.inputs.agents.startDriven({ ...spec, model: `${target.host}/${target.agent}` }, (effects) =>
        followRemoteRun(client, target.host, response, effects),
      );
    } catch (error) {
      response.destroy();
      throw error;
    }
  }
}

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${LIST_TIMEOUT_MS} ms`)), LIST_TIMEOUT_MS);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
