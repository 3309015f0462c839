import { realpath } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import type { AgentInputMessage, AgentRun, AgentRunEvent, AgentRunEventBody, AgentRunRequest, AgentRunSummary, RunArtifact } from '#shared/api/agents.js';
import type { AgentSettings, ConfigDocument } from '#shared/api/config.js';
import { HearthError } from '../errors.js';
import { newId } from '../ids.js';
import type { HistoryItem } from '../inference/types.js';
import type { Logger } from '../logger.js';
import type { CatalogEntry } from '../tools/catalog.js';
import type { MemoryService } from '../memory/service.js';
import type { Db } from '../store/database.js';
import { ApprovalBroker } from './approvals.js';
import { findAgent, inputHistory, inputMessages, messageText } from './definitions.js';
import { executeRun, runError, type RunEffects, type RunOutcome } from './loop.js';
import { resolveAgentModel, withCallSignal, type ModelSources } from './model.js';
import { systemMessage } from './prompt.js';
import { RunStore } from './store.js';
import type { ToolResult } from '../tools/result.js';
import { agentToolbox, type AgentTool } from './toolbox.js';
import { endLeftovers, recoverRuns } from './recovery.js';
import { EVENT_PAGE, followRun, type Following } from './replay.js';
import type { ProcessLedger } from '../tools/builtin/containment.js';

export interface AgentServiceOptions {
  db: Db;
  /** The configuration in force, read at each run. */
  config(): ConfigDocument;
  models: ModelSources;
  /** The tool catalog and the MCP services behind it. */
  tools: { entries(): readonly CatalogEntry[]; call(entry: CatalogEntry, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult> };
  memory: MemoryService;
  log: Logger;
}

/** A run in this process: its listeners, its cancel switch and its end. */
interface LiveRun {
  run: AgentRun;
  controller: AbortController;
  sequence: number;
  listeners: Set<(event: AgentRunEvent) => void>;
  finished: Promise<AgentRun>;
  resolve(run: AgentRun): void;
  conversation: string;
  /** The server is stopping: an unfinished run is interrupted, not cancelled. */
  stopping: boolean;
  /** Driven from elsewhere (startDriven): nothing of it goes into this host's history or memory. */
  driven: boolean;
}

/** A run whose work happens elsewhere, as it is recorded here. */
export interface DrivenRunSpec {
  agentId: string;
  /** What the run object shows as its model (the remote agent's, or the cloud agent's name). */
  model: string;
  input: AgentInputMessage[];
  conversationId?: string;
}

/** What a driven run may do: report events (not run.created or the terminal one) and hear its cancel. */
export interface DriveEffects {
  runId: string;
  conversationId: string;
  signal: AbortSignal;
  emit(body: AgentRunEventBody): void;
}

/** How a driven run ended. */
export type DrivenOutcome = Omit<RunOutcome, 'messages'>;

const seconds = () => Math.floor(Date.now() / 1000);
/** How long closing waits for runs to record their end; a run still going is marked interrupted at the next start. */
const CLOSE_WAIT_MS = 10_000;

/**
 * Agent runs: starts them (policy, approvals, tools, memory), persists every step and event,
 * lets any number of listeners follow a run (a listener that leaves never stops it), cancels,
 * and at start marks the runs a previous process left unfinished as interrupted.
 */
export class AgentService {
  readonly approvals: ApprovalBroker;
  readonly store: RunStore;
  private readonly live = new Map<string, LiveRun>();
  private readonly busy = new Map<string, string>();
  /** Ending what shell calls of a crashed process left running (started by `recover`). */
  leftovers: Promise<number> = Promise.resolve(0);

  constructor(private readonly options: AgentServiceOptions) {
    this.store = new RunStore(options.db);
    this.approvals = new ApprovalBroker(options.db);
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

  /** Starts a run; problems found before it starts (unknown agent, no model, busy conversation) are thrown. */
  async start(agentId: string, request: AgentRunRequest): Promise<{ run: AgentRun; finished: Promise<AgentRun> }> {
    const agent = findAgent(this.options.config(), agentId);
    if (!agent.model)
      throw new HearthError('invalid_request_error', `The agent "${agent.id}" has no model: set agents[].model in the configuration.`, { param: 'id' });
    const input = inputMessages(request.input);
    const conversationId = request.conversation_id ?? `conv_${randomBytes(12).toString('base64url')}`;
    const key = `${agent.id}\n${conversationId}`;
    this.assertFree(key);
    const model = await resolveAgentModel(this.options.models, agent.model);
    const workspace = await this.workspace(agent);
    if (this.busy.has(key)) throw new HearthError('conversation_busy', undefined, { param: 'conversation_id' });
    const query = input
      .filter((message) => message.role === 'user')
      .map((message) => messageText(message.content))
      .join('\n');
    const history: HistoryItem[] = [
      ...systemMessage(agent, this.recall(agent, query)),
      ...this.store.history(agent.id, conversationId),
      ...inputHistory(input),
    ];
    const live = this.open({ agentId: agent.id, conversationId, model: model.id, input }, key, false);
    const toolbox = agentToolbox(agent, this.options.tools.entries());
    this.settle(live, this.execute(live, { agent, model, history, toolbox, signal: live.controller.signal }, workspace, query));
    return { run: structuredClone(live.run), finished: live.finished };
  }

  /**
   * Starts a run whose work happens elsewhere (a paired host, a cloud workspace): `drive` reports
   * its events and resolves with how it ended; cancel aborts its signal. It is recorded, followed
   * and cancelled like a local run; its conversation's history stays where the agent runs.
   */
  startDriven(spec: DrivenRunSpec, drive: (effects: DriveEffects) => Promise<DrivenOutcome>): { run: AgentRun; finished: Promise<AgentRun> } {
    const conversationId = spec.conversationId ?? `conv_${randomBytes(12).toString('base64url')}`;
    const key = `${spec.agentId}\n${conversationId}`;
    this.assertFree(key);
    const live = this.open({ ...spec, conversationId }, key, true);
    const effects: DriveEffects = { runId: live.run.id, conversationId, signal: live.controller.signal, emit: (body) => this.emit(live, body) };
    const ended = (async () => {
      let outcome: DrivenOutcome;
      try {
        outcome = await drive(effects);
      } catch (error) {
        outcome = { status: 'failed', outputText: '', steps: [], usage: live.run.usage, error: runError(error) };
      }
      return this.finish(live, { ...outcome, messages: [] }, '');
    })();
    this.settle(live, ended);
    return { run: structuredClone(live.run), finished: live.finished };
  }

  /** Refuses a second run in a conversation that has one under way (asked before work elsewhere is started). */
  assertConversationFree(agentId: string, conversationId: string | undefined): void {
    if (conversationId !== undefined) this.assertFree(`${agentId}\n${conversationId}`);
  }

  private assertFree(key: string): void {
    const holder = this.busy.get(key);
    if (holder)
      throw new HearthError('conversation_busy', `The run ${holder} of this conversation is in progress; wait for it or cancel it.`, {
        param: 'conversation_id',
      });
  }

  /** Records a new run, makes it live (its conversation busy) and emits run.created. */
  private open(spec: Required<DrivenRunSpec>, key: string, driven: boolean): LiveRun {
    const run: AgentRun = {
      id: newId('run_'),
      object: 'agent.run',
      agent_id: spec.agentId,
      conversation_id: spec.conversationId,
      model: spec.model,
      status: 'running',
      input: spec.input,
      output_text: '',
      steps: [],
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      created_at: seconds(),
      completed_at: null,
    };
    this.store.insert(run);
    let finish!: (run: AgentRun) => void;
    const live: LiveRun = {
      run,
      controller: new AbortController(),
      sequence: 0,
      listeners: new Set(),
      finished: new Promise((resolve) => (finish = resolve)),
      resolve: (ended) => finish(ended),
      conversation: key,
      stopping: false,
      driven,
    };
    this.live.set(run.id, live);
    this.busy.set(key, run.id);
    this.emit(live, { type: 'run.created', run: structuredClone(run) });
    return live;
  }

  /** Resolves the run's `finished` with its end; a failure to record the end still frees its conversation. */
  private settle(live: LiveRun, ended: Promise<AgentRun>): void {
    void ended
      .catch((error: unknown) => {
        this.options.log.error({ err: error, run: live.run.id }, 'finishing an agent run failed');
        this.live.delete(live.run.id);
        this.busy.delete(live.conversation);
        return live.run;
      })
      .then(live.resolve);
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
    let found: RunArtifact | undefined;
    for (const event of this.store.eventsOfType(runId, 'artifact.created'))
      if (event.type === 'artifact.created' && event.artifact.artifact_id === artifactId) found = event.artifact;
    if (!found) throw new HearthError('artifact_not_found', `Run ${runId} has no artifact "${artifactId}".`);
    return found;
  }

  /** A page of a run's events after `after`, oldest first. */
  events(runId: string, after: number, limit = EVENT_PAGE): AgentRunEvent[] {
    this.assertRun(runId);
    return this.store.events(runId, after, limit);
  }

  /**
   * Hands on the stored events after `after` (in pages, the event loop free between them), then
   * follows the run live; `replayed` says whether more events can come (false once it has ended).
   */
  follow(runId: string, after: number, listener: (event: AgentRunEvent) => void): Following {
    this.assertRun(runId);
    return followRun(this.store, runId, after, () => this.live.get(runId), listener);
  }

  private assertRun(runId: string): void {
    if (!this.store.exists(runId)) throw new HearthError('run_not_found', `No agent run has the id "${runId}".`);
  }

  /** Cancels a run of this process and resolves with it once it has stopped; a finished run comes back as it is. */
  async cancel(runId: string): Promise<AgentRun> {
    const live = this.live.get(runId);
    if (!live) return this.get(runId);
    live.controller.abort(new Error('cancelled'));
    return live.finished;
  }

  /** Ends every run of this process (they are recorded as interrupted); waits a few seconds at most. */
  async close(): Promise<void> {
    const running = [...this.live.values()];
    for (const live of running) {
      live.stopping = true;
      live.controller.abort(new Error('server shutting down'));
    }
    let timer: NodeJS.Timeout | undefined;
    const patience = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)));
    await Promise.race([Promise.all([...running.map((live) => live.finished), this.leftovers]), patience]);
    clearTimeout(timer);
  }

  /** An API exchange named by X-Service-Agent-Id: a turn of that agent's conversation, and a memory signal. */
  attribute(agent: AgentSettings, conversationId: string, user: string, assistant: string): void {
    this.store.appendMessages(agent.id, conversationId, null, [
      { role: 'user', text: user },
      { role: 'assistant', text: assistant, toolCalls: [] },
    ]);
    if (agent.memory.enabled) this.options.memory.buffer({ agentId: agent.id, conversationId, user, assistant });
  }

  private recall(agent: AgentSettings, query: string) {
    if (!agent.memory.enabled) return [];
    try {
      return this.options.memory.recall(agent.id, query, agent.memory.budget_tokens).items;
    } catch (error) {
      this.options.log.warn({ err: error, agent: agent.id }, 'memory recall failed; the run goes on without memory');
      return [];
    }
  }

  private async workspace(agent: AgentSettings): Promise<string | null> {
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

  private emit(live: LiveRun, body: AgentRunEventBody): void {
    const event = { ...body, sequence: ++live.sequence, run_id: live.run.id } as AgentRunEvent;
    this.store.appendEvent(event);
    for (const listener of live.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.options.log.warn({ err: error }, 'an agent run listener failed');
      }
    }
  }

  private async execute(live: LiveRun, setup: Parameters<typeof executeRun>[0], workspace: string | null, query: string): Promise<AgentRun> {
    const { agent } = setup;
    const defaults = this.options.config().agents_defaults;
    const effects: RunEffects = {
      emit: (body) => this.emit(live, body),
      progress: (steps, waiting) => {
        live.run.steps = steps;
        live.run.status = waiting ? 'awaiting_approval' : 'running';
        // Only the step under way changes: earlier ones are written once, when they end.
        this.store.update(live.run, steps.slice(-2));
      },
      record: (step, position, call) => this.store.putCall(live.run.id, step, position, call),
      batch: (work) => this.store.batch(work),
      approve: (tool, call) =>
        this.approvals.open({
          runId: live.run.id,
          agentId: agent.id,
          callId: call.id,
          name: call.name,
          arguments: call.arguments,
          class: tool.class,
          timeoutSeconds: this.options.config().agents_defaults.approval_timeout_seconds,
          signal: setup.signal,
        }),
      execute: (tool, args, signal) => withCallSignal(signal, (own) => this.runTool(tool, args, { agentId: agent.id, workspace, signal: own }, live.run.id)),
      outputLimit: defaults.tool_output_kb * 1024,
    };
    let outcome: RunOutcome;
    try {
      outcome = await executeRun(setup, effects);
    } catch (error) {
      this.options.log.error({ err: error, run: live.run.id }, 'agent run failed unexpectedly');
      outcome = { status: 'failed', outputText: '', steps: live.run.steps, usage: live.run.usage, messages: [], error: runError(error) };
    }
    return this.finish(live, outcome, query);
  }

  /** A built-in tool runs here (its shell calls recorded while they run); a service's tool through MCP. */
  private runTool(tool: AgentTool, args: Record<string, unknown>, context: { agentId: string; workspace: string | null; signal: AbortSignal }, runId: string) {
    if (!tool.builtin) return this.options.tools.call(tool.entry, args, context.signal);
    const processes: ProcessLedger = { started: (marker) => this.store.addProcess(marker, runId), ended: (marker) => this.store.removeProcess(marker) };
    const shellTimeoutSeconds = this.options.config().agents_defaults.shell_timeout_seconds;
    return tool.builtin.run(args, { ...context, memory: this.options.memory, shellTimeoutSeconds, processes });
  }

  private finish(live: LiveRun, outcome: RunOutcome, query: string): AgentRun {
    const run = live.run;
    const interrupted = outcome.status === 'cancelled' && live.stopping;
    run.status = interrupted ? 'failed' : outcome.status;
    run.output_text = outcome.outputText;
    run.steps = outcome.steps;
    run.usage = outcome.usage;
    run.completed_at = seconds();
    const error = interrupted ? { code: 'interrupted', message: 'Hearth was stopped during this run, so it was not finished.' } : outcome.error;
    if (error) run.error = error;
    // A local run's calls were recorded as they went; a driven run's come only now.
    this.store.update(run, run.steps, live.driven);
    if (run.status === 'completed' && !live.driven) this.remember(run, outcome.messages, query);
    const final = structuredClone(run);
    if (run.status === 'completed') this.emit(live, { type: 'run.completed', run: final });
    else if (run.status === 'cancelled') this.emit(live, { type: 'run.cancelled', run: final });
    else this.emit(live, { type: 'run.failed', run: final, error: error ?? { code: 'internal_error', message: 'The run failed.' } });
    this.live.delete(run.id);
    this.busy.delete(live.conversation);
    return final;
  }

  /** A completed run continues its conversation's history and is buffered into the agent's memory. */
  private remember(run: AgentRun, messages: HistoryItem[], query: string): void {
    try {
      this.store.appendMessages(run.agent_id, run.conversation_id, run.id, [...inputHistory(run.input), ...messages]);
      const agent = this.options.config().agents.find((candidate) => candidate.id === run.agent_id);
      if (agent?.memory.enabled !== false)
        this.options.memory.buffer({ agentId: run.agent_id, conversationId: run.conversation_id, user: query, assistant: run.output_text });
    } catch (error) {
      this.options.log.error({ err: error, run: run.id }, 'recording the run in its conversation failed');
    }
  }
}
