import type { AgentRecord, AgentRunRequest } from '#shared/api/agents.js';
import type { CloudTarget } from '../access/agent-target.js';
import { inputMessages } from '../agents/definitions.js';
import { LIST_TIMEOUT_MS, PlacedAgentSource, type PlacedSourceInputs } from '../agents/dispatcher.js';
import type { StartedRun } from '../agents/live-runs.js';
import type { CloudAgents } from './agents.js';
import { cloudRecord, driveCloudRun } from './run.js';
import type { CloudSignIn } from './sign-in.js';

export interface CloudAgentSourceInputs extends PlacedSourceInputs {
  cloud: { signIn: CloudSignIn; agents: CloudAgents };
  /** `<data-dir>/artifacts`, where cloud runs keep their artifacts. */
  artifacts: string;
}

/**
 * The agents that signed-in cloud workspaces publish, as `cloud:<workspace>/<agent>`: each run is
 * an A2A task, its text and artifacts relayed into a run recorded here.
 */
export class CloudAgentSource extends PlacedAgentSource<CloudTarget, CloudAgentSourceInputs> {
  protected readonly failed = 'agents of a cloud workspace could not be listed';

  /** Starts the agent's A2A task (refusals: not signed in, no such agent) and records it here. */
  async start(target: CloudTarget, request: AgentRunRequest): Promise<StartedRun> {
    const input = inputMessages(request.input);
    const agent = await this.inputs.cloud.agents.find(target);
    return this.inputs.runs.startDriven(this.drivenSpec(target, input, agent.card.name, request), (effects) =>
      driveCloudRun(this.inputs.cloud, agent, input, this.inputs.artifacts, request.conversation_id, effects),
    );
  }

  /** The configured workspaces signed in now. */
  protected places(): string[] {
    return this.inputs
      .config()
      .cloud_workspaces.filter((workspace) => this.inputs.cloud.signIn.status(workspace.name).state === 'signed_in')
      .map((workspace) => workspace.name);
  }

  protected placeOf(target: CloudTarget): string {
    return target.workspace;
  }

  protected async agentsOf(workspace: string): Promise<AgentRecord[]> {
    return (await withTimeout(this.inputs.cloud.agents.list(workspace))).map(cloudRecord);
  }
}

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${LIST_TIMEOUT_MS} ms`)), LIST_TIMEOUT_MS);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
