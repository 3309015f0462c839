import type { AgentInputMessage, AgentRun, AgentRunError } from '#shared/api/agents.js';
import { HearthError } from '../errors.js';
import { runFailure } from '../failures.js';
import { newId, unixSeconds } from '../ids.js';
import type { Logger } from '../logger.js';
import type { RunEvents, Numbered } from './events.js';
import type { RunOutcome } from './loop.js';
import type { RunStore } from './store.js';

/** A run just started: as it stands now, and its end. */
export interface StartedRun {
  run: AgentRun;
  finished: Promise<AgentRun>;
}

/** A run in this process: its listeners, its cancel switch and its end. */
export interface LiveRun extends Numbered {
  run: AgentRun;
  controller: AbortController;
  finished: Promise<AgentRun>;
  resolve(run: AgentRun): void;
  /** The conversation it holds (agent and conversation id). */
  conversation: string;
  /** The server is stopping: an unfinished run is interrupted, not cancelled. */
  stopping: boolean;
  /** Driven from elsewhere (a paired host, a cloud workspace): its calls are written only at its end. */
  driven: boolean;
}

/** What a new run is recorded with. */
export interface NewRun {
  agentId: string;
  conversationId: string;
  /** What the run shows as its model (a local model's id, a paired host's agent id, the cloud agent's name). */
  model: string;
  input: AgentInputMessage[];
}

/** How long closing waits for runs to record their end; a run still going is marked interrupted at the next start. */
const CLOSE_WAIT_MS = 10_000;

const conversationKey = (agentId: string, conversationId: string) => `${agentId}\n${conversationId}`;

/**
 * The runs of this process and the conversations they hold: one run at a time per conversation.
 * A run is opened (recorded, made live, run.created), settled and finished (its end recorded, the
 * terminal event, its conversation free again), or cancelled; closing interrupts them all.
 */
export class LiveRuns {
  private readonly live = new Map<string, LiveRun>();
  private readonly busy = new Map<string, string>();

  constructor(
    private readonly store: RunStore,
    private readonly events: RunEvents,
    private readonly log: Logger,
  ) {}

  get(runId: string): LiveRun | undefined {
    return this.live.get(runId);
  }

  /** Refuses a second run in a conversation that has one under way, naming the run that holds it. */
  assertFree(agentId: string, conversationId: string): void {
    const holder = this.busy.get(conversationKey(agentId, conversationId));
    if (holder)
      throw new HearthError('conversation_busy', `The run ${holder} of this conversation is in progress; wait for it or cancel it.`, {
        param: 'conversation_id',
      });
  }

  isBusy(agentId: string, conversationId: string): boolean {
    return this.busy.has(conversationKey(agentId, conversationId));
  }

  /** Records a new run, makes it live (its conversation busy) and emits run.created. */
  open(spec: NewRun, driven: boolean): LiveRun {
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
      created_at: unixSeconds(),
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
      conversation: conversationKey(spec.agentId, spec.conversationId),
      stopping: false,
      driven,
    };
    this.live.set(run.id, live);
    this.busy.set(live.conversation, run.id);
    this.events.emit(live, { type: 'run.created', run: structuredClone(run) });
    return live;
  }

  /** Resolves the run's `finished` with its end; a failure to record the end still frees its conversation. */
  settle(live: LiveRun, ended: Promise<AgentRun>): StartedRun {
    void ended
      .catch((error: unknown) => {
        this.log.error({ err: error, run: live.run.id }, 'finishing an agent run failed');
        this.release(live);
        return live.run;
      })
      .then(live.resolve);
    return { run: structuredClone(live.run), finished: live.finished };
  }

  /**
   * Records how the run ended (a cancel while the server stops is `interrupted`), lets
   * `completed` add to what a completed run leaves behind, emits the terminal event and frees
   * the conversation.
   */
  finish(live: LiveRun, outcome: Omit<RunOutcome, 'messages'>, completed?: (run: AgentRun) => void): AgentRun {
    const run = live.run;
    const interrupted = outcome.status === 'cancelled' && live.stopping;
    run.status = interrupted ? 'failed' : outcome.status;
    run.output_text = outcome.outputText;
    run.steps = outcome.steps;
    run.usage = outcome.usage;
    run.completed_at = unixSeconds();
    const error: AgentRunError | undefined = interrupted
      ? runFailure('interrupted', 'Hearth was stopped during this run, so it was not finished.')
      : outcome.error;
    if (error) run.error = error;
    // A local run's calls were recorded as they went; a driven run's come only now.
    this.store.update(run, run.steps, live.driven);
    if (run.status === 'completed') completed?.(run);
    const final = structuredClone(run);
    if (run.status === 'completed') this.events.emit(live, { type: 'run.completed', run: final });
    else if (run.status === 'cancelled') this.events.emit(live, { type: 'run.cancelled', run: final });
    else this.events.emit(live, { type: 'run.failed', run: final, error: error ?? runFailure('internal_error', 'The run failed.') });
    this.release(live);
    return final;
  }

  /** Cancels a run of this process and resolves with it once it has stopped; undefined when it is not running here. */
  cancel(runId: string): Promise<AgentRun> | undefined {
    const live = this.live.get(runId);
    if (!live) return undefined;
    live.controller.abort(new Error('cancelled'));
    return live.finished;
  }

  /** Ends every run of this process (they are recorded as interrupted); waits a few seconds at most, for them and `also`. */
  async close(also: Promise<unknown>): Promise<void> {
    const running = [...this.live.values()];
    for (const live of running) {
      live.stopping = true;
      live.controller.abort(new Error('server shutting down'));
    }
    let timer: NodeJS.Timeout | undefined;
    const patience = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)));
    await Promise.race([Promise.all([...running.map((live) => live.finished), also]), patience]);
    clearTimeout(timer);
  }

  private release(live: LiveRun): void {
    this.live.delete(live.run.id);
    this.busy.delete(live.conversation);
  }
}
