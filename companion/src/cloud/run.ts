import type { AgentInputMessage, AgentRecord } from '#shared/api/agents.js';
import { messageText } from '../agents/definitions.js';
import type { DriveEffects, DrivenOutcome } from '../agents/driven-run.js';
import type { CloudAgent, CloudAgents } from './agents.js';
import { ArtifactFolder } from './artifacts.js';
import { RUN_FAILURES, runFailure } from '../failures.js';
import { dispatchTask } from './dispatch.js';
import type { CloudSignIn } from './sign-in.js';

/** A published cloud agent as GET /agents lists it: `cloud:<workspace>/<agent>`, source cloud, no local settings. */
export function cloudRecord(agent: CloudAgent): AgentRecord {
  return {
    id: agent.id,
    object: 'agent',
    source: 'cloud',
    name: agent.card.name,
    description: agent.card.description || null,
    instructions: null,
    model: null,
    tools: [],
    tool_policy: { read: 'deny', write: 'deny', exec: 'deny', network: 'deny' },
    tool_overrides: {},
    tool_choice: 'auto',
    memory: { enabled: false, budget_tokens: null },
    workspace: null,
    max_steps: 1,
    temperature: null,
    max_tokens: null,
  };
}

/**
 * Drives a run as an A2A task: text (artifacts' and the agent's last message) becomes
 * message.delta, each artifact is stored under `<artifacts>/<run_id>/` and announced with
 * artifact.created, the task's final state becomes the run's end, and cancel sends the A2A cancel.
 * The conversation id, when given, is sent as the task's A2A context.
 */
export async function driveCloudRun(
  cloud: { signIn: CloudSignIn; agents: CloudAgents },
  agent: CloudAgent,
  input: AgentInputMessage[],
  artifactsRoot: string,
  conversationId: string | undefined,
  effects: DriveEffects,
): Promise<DrivenOutcome> {
  const text = input
    .filter((message) => message.role === 'user')
    .map((message) => messageText(message.content))
    .join('\n\n');
  const outcome = await dispatchTask({
    agent,
    fetchImpl: cloud.agents.authorizedFetch(cloud.signIn.settings(agent.workspace)),
    input: text,
    contextId: conversationId,
    artifacts: new ArtifactFolder(artifactsRoot, effects.runId),
    signal: effects.signal,
    onEvent: (event) => {
      if (event.kind === 'text') effects.emit({ type: 'message.delta', step: 0, delta: event.delta });
      else if (event.kind === 'artifact') effects.emit({ type: 'artifact.created', artifact: event.artifact });
    },
  });
  const usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  if (outcome.state === 'completed') return { status: 'completed', outputText: outcome.text, steps: [], usage };
  if (outcome.state === 'canceled') return { status: 'cancelled', outputText: outcome.text, steps: [], usage };
  // What the task's last state means for the run: the failure table's words for cloud_task_<state>.
  const code = `cloud_task_${outcome.state}` as const;
  return {
    status: 'failed',
    outputText: outcome.text,
    steps: [],
    usage,
    error: runFailure(code, outcome.message ? `${RUN_FAILURES[code]} It said: ${outcome.message}` : undefined),
  };
}
