import { realpath } from 'node:fs/promises';
import type { AgentInputMessage, AgentRun, AgentRunRequest } from '#shared/api/agents.js';
import type { AgentSettings, ConfigDocument } from '#shared/api/config.js';
import { HearthError } from '../errors.js';
import { newId } from '../ids.js';
import type { HistoryItem } from '../inference/types.js';
import type { Logger } from '../logger.js';
import type { ProcessLedger } from '../tools/builtin/containment.js';
import type { CatalogEntry } from '../tools/catalog.js';
import type { ToolResult } from '../tools/result.js';
import type { ApprovalBroker } from './approvals.js';
import { findAgent, inputHistory, inputMessages, messageText } from './definitions.js';
import type { RunEvents } from './events.js';
import type { LiveRun, LiveRuns, StartedRun } from './live-runs.js';
import { executeRun, runError, type RunEffects, type RunOutcome, type RunSetup } from './loop.js';
import type { MemoryLink } from './memory-link.js';
import { withCallSignal } from '../generation/call-signal.js';
import { checkedHistory } from '../generation/media-check.js';
import { resolveAgentModel, type AgentModel, type ModelSources } from './model.js';
import { systemMessage } from './prompt.js';
import type { RunStore } from './store.js';
import { historyFor } from './tool-images.js';
import { agentToolbox, type AgentTool } from './toolbox.js';

/** The tool catalog and the MCP services behind it, as runs use them. */
export interface ToolSource {
  entries(): readonly CatalogEntry[];
  call(entry: CatalogEntry, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult>;
}

export interface LocalRunOptions {
  /** The configuration in force, read at each run. */
  config(): ConfigDocument;
  models: ModelSources;
  tools: ToolSource;
  memory: MemoryLink;
  approvals: ApprovalBroker;
  store: RunStore;
  runs: LiveRuns;
  events: RunEvents;
  log: Logger;
}

/** A run's tools act for its agent, in its workspace, until it is cancelled. */
interface ToolScope {
  agentId: string;
  workspace: string | null;
  signal: AbortSignal;
}

/**
 * Runs of this machine's own agents: the agent and its model resolved, memory recalled into the
 * system message, the conversation so far, the tools its policy gives it; then the loop, with
 * approvals asked of the owner and every step recorded as it goes.
 */
export class LocalRuns {
  constructor(private readonly options: LocalRunOptions) {}

  /** Starts a run; problems found before it starts (unknown agent, no model, busy conversation) are thrown. */
  async start(agentId: string, request: AgentRunRequest): Promise<StartedRun> {
    const { runs } = this.options;
    const agent = findAgent(this.options.config(), agentId);
    if (!agent.model)
      throw new HearthError('invalid_request_error', `The agent "${agent.id}" has no model: set agents[].model in the configuration.`, { param: 'id' });
    const input = inputMessages(request.input);
    const conversationId = request.conversation_id ?? newId('conv_');
    runs.assertFree(agent.id, conversationId);
    const model = await resolveAgentModel(this.options.models, agent.model, { agent: agent.id, id: conversationId });
    const workspace = await workspaceOf(agent);
    const asked = await this.checkedInput(input, model);
    // Another run may have taken the conversation while the model loaded.
    if (runs.isBusy(agent.id, conversationId)) throw new HearthError('conversation_busy', undefined, { param: 'conversation_id' });
    // The run's own turn is its last user message: earlier input messages are history the caller kept.
    const query =
      input
        .map((message) => messageText(message.content))
        .filter((text, index) => input[index]!.role === 'user' && text.trim())
        .at(-1) ?? '';
    const history: HistoryItem[] = [
      ...systemMessage(agent, this.options.memory.recall(agent, query)),
      ...historyFor(model, this.options.store.history(agent.id, conversationId)),
      ...asked,
    ];
    const live = runs.open({ agentId: agent.id, conversationId, model: model.id, input }, false);
    const toolbox = agentToolbox(agent, this.options.tools.entries());
    return runs.settle(live, this.execute(live, { agent, model, history, toolbox, signal: live.controller.signal }, workspace, query));
  }

  /**
   * The input as history, its images read and checked (a bad one is a 400 naming it, before the
   * run starts); images for a local model without vision are refused with what to do.
   */
  private async checkedInput(input: AgentInputMessage[], model: AgentModel): Promise<HistoryItem[]> {
    const items = inputHistory(input);
    if (!items.some((item) => item.role === 'user' && item.media)) return items;
    if (model.local && !model.vision)
      throw new HearthError(
        'invalid_request_error',
        `The agent's model ${model.id} cannot take images: it has no multimodal projector. Send text only, or give the agent a model whose capabilities in GET /v1/models include vision.`,
        { param: 'input' },
      );
    return checkedHistory(items, this.options.models.remoteImages?.());
  }

  private async execute(live: LiveRun, setup: RunSetup, workspace: string | null, query: string): Promise<AgentRun> {
    let outcome: RunOutcome;
    try {
      outcome = await executeRun(setup, this.effects(live, setup, workspace));
    } catch (error) {
      this.options.log.error({ err: error, run: live.run.id }, 'agent run failed unexpectedly');
      outcome = { status: 'failed', outputText: '', steps: live.run.steps, usage: live.run.usage, messages: [], error: runError(error) };
    }
    return this.options.runs.finish(live, outcome, (run) => this.options.memory.remember(run, outcome.messages, query));
  }

  /** How the loop reaches the world for one run: its events, its records, approvals and tools. */
  private effects(live: LiveRun, setup: RunSetup, workspace: string | null): RunEffects {
    const { store, approvals, config } = this.options;
    const agentId = setup.agent.id;
    return {
      emit: (body) => this.options.events.emit(live, body),
      progress: (steps, waiting) => {
        live.run.steps = steps;
        live.run.status = waiting ? 'awaiting_approval' : 'running';
        // Only the step under way changes: earlier ones are written once, when they end.
        store.update(live.run, steps.slice(-2));
      },
      record: (step, position, call) => store.putCall(live.run.id, step, position, call),
      batch: (work) => store.batch(work),
      approve: (tool, call) =>
        approvals.open({
          runId: live.run.id,
          agentId,
          callId: call.id,
          name: call.name,
          arguments: call.arguments,
          class: tool.class,
          timeoutSeconds: config().agents_defaults.approval_timeout_seconds,
          signal: setup.signal,
        }),
      execute: (tool, args, signal) => withCallSignal(signal, (own) => this.runTool(tool, args, { agentId, workspace, signal: own }, live.run.id)),
      outputLimit: config().agents_defaults.tool_output_kb * 1024,
    };
  }

  /** A built-in tool runs here (its shell calls recorded while they run); a service's tool through MCP. */
  private runTool(tool: AgentTool, args: Record<string, unknown>, scope: ToolScope, runId: string): Promise<ToolResult> {
    if (!tool.builtin) return this.options.tools.call(tool.entry, args, scope.signal);
    const { store } = this.options;
    const processes: ProcessLedger = { started: (marker) => store.addProcess(marker, runId), ended: (marker) => store.removeProcess(marker) };
    const shellTimeoutSeconds = this.options.config().agents_defaults.shell_timeout_seconds;
    return tool.builtin.run(args, { ...scope, memory: this.options.memory.tools, shellTimeoutSeconds, processes });
  }
}

/** The real path of the agent's workspace, or null when it has none; one that cannot be read refuses the run. */
async function workspaceOf(agent: AgentSettings): Promise<string | null> {
  if (!agent.workspace) return null;
  try {
    return await realpath(agent.workspace);
  } catch {
    throw new HearthError(
      'invalid_request_error',
      `The workspace of agent "${agent.id}" (${agent.workspace}) does not exist or cannot be read. Create the folder or change agents[].workspace.`,
      { param: 'id' },
    );
  }
}
