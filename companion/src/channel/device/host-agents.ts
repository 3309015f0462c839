import type { AgentRecord, AgentRunRequest } from '#shared/api/agents.js';
import type { HostTarget } from '../../access/agent-target.js';
import { inputMessages } from '../../agents/definitions.js';
import { LIST_TIMEOUT_MS, PlacedAgentSource, type PlacedSourceInputs } from '../../agents/dispatcher.js';
import type { StartedRun } from '../../agents/live-runs.js';
import type { AgentService } from '../../agents/service.js';
import type { PairedHosts } from './hosts.js';
import { followHostRun, openHostRun, hostAgentRecord } from './proxy-run.js';

export interface HostAgentsInputs extends PlacedSourceInputs {
  /** Where a run on a host is recorded here, and its conversation held. */
  runs: Pick<AgentService, 'startDriven' | 'assertConversationFree'>;
  hosts: PairedHosts;
}

/**
 * The agents of the hosts this companion is paired with, as `<host>/<agent>`: the ones each host
 * granted this device, run over mutual TLS with their events proxied into a run recorded here.
 */
export class HostAgents extends PlacedAgentSource<HostTarget, HostAgentsInputs> {
  protected readonly failed = 'agents of a paired host could not be listed';

  /** Starts the run on the host (refusals: unknown host or agent, changed certificate, revoked) and follows it here. */
  async start(target: HostTarget, request: AgentRunRequest): Promise<StartedRun> {
    const input = inputMessages(request.input);
    const { runs } = this.inputs;
    const client = this.inputs.hosts.client(target.host);
    // Refused here first, so a busy conversation never starts a run on the host that nobody follows.
    runs.assertConversationFree(target.id, request.conversation_id);
    const response = await openHostRun(client, target.host, target.agent, { ...request, input });
    try {
      return runs.startDriven(this.drivenSpec(target, input, target.id, request), (effects) => followHostRun(client, target.host, response, effects));
    } catch (error) {
      response.destroy();
      throw error;
    }
  }

  /** The paired hosts. */
  protected places(): string[] {
    return this.inputs.config().remote_hosts.map((host) => host.name);
  }

  protected placeOf(target: HostTarget): string {
    return target.host;
  }

  protected async agentsOf(host: string): Promise<AgentRecord[]> {
    const records = await this.inputs.hosts.agents(host, AbortSignal.timeout(LIST_TIMEOUT_MS));
    return records.map((record) => hostAgentRecord(host, record));
  }
}
