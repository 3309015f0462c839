import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type SendMessageRequest, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import { HearthError } from '../errors.js';
import type { CloudAgent } from './agents.js';
import { artifactText, type ArtifactFolder, type StoredArtifact } from './artifacts.js';

/** A2A task states in Hearth's words. */
export type CloudTaskState = 'submitted' | 'working' | 'input_required' | 'auth_required' | 'completed' | 'failed' | 'canceled' | 'rejected' | 'unknown';

/** What a dispatched task reports while it runs. */
export type CloudTaskEvent =
  | { kind: 'status'; task_id: string; state: CloudTaskState; message: string | null }
  | { kind: 'text'; delta: string }
  | { kind: 'artifact'; artifact: StoredArtifact };

export interface CloudTaskOutcome {
  taskId: string | null;
  contextId: string | null;
  state: CloudTaskState;
  /** Everything streamed as text: text artifacts, then the agent's last message. */
  text: string;
  message: string | null;
  artifacts: StoredArtifact[];
}

export interface DispatchOptions {
  agent: CloudAgent;
  /** fetch with the workspace's token (CloudAgents.authorizedFetch). */
  fetchImpl: typeof fetch;
  input: string;
  /** The A2A context to continue (a conversation's earlier task). */
  contextId?: string;
  artifacts: ArtifactFolder;
  /** Aborting it sends the A2A cancel; the task's own final state ends the dispatch. */
  signal: AbortSignal;
  onEvent(event: CloudTaskEvent): void;
  /** How often a non-streaming task is polled (ms). */
  pollIntervalMs?: number;
}

const STATES: Record<number, CloudTaskState> = {
  [TaskState.TASK_STATE_SUBMITTED]: 'submitted',
  [TaskState.TASK_STATE_WORKING]: 'working',
  [TaskState.TASK_STATE_INPUT_REQUIRED]: 'input_required',
  [TaskState.TASK_STATE_AUTH_REQUIRED]: 'auth_required',
  [TaskState.TASK_STATE_COMPLETED]: 'completed',
  [TaskState.TASK_STATE_FAILED]: 'failed',
  [TaskState.TASK_STATE_CANCELED]: 'canceled',
  [TaskState.TASK_STATE_REJECTED]: 'rejected',
};
/** States after which the task will not change by itself (input and auth end Hearth's run too). */
const FINAL = new Set<CloudTaskState>(['completed', 'failed', 'canceled', 'rejected', 'input_required', 'auth_required']);
/** How long a cancelled task may take to confirm before Hearth stops listening. */
const CANCEL_GRACE_MS = 10_000;

/**
 * Sends one A2A task to a cloud agent and follows it to its end: streaming when the agent's card
 * says it streams, polling otherwise. Status changes, text and artifacts (stored in the data
 * folder) are reported as they come; aborting `signal` sends the A2A cancel.
 */
export async function dispatchTask(options: DispatchOptions): Promise<CloudTaskOutcome> {
  const client = await clientFor(options);
  const task = new TaskFollower(options);
  const request: SendMessageRequest = {
    tenant: '',
    metadata: {},
    message: userMessage(options.input, options.contextId),
    configuration: undefined,
  };
  const listening = new AbortController();
  const cancel = () => {
    void task.cancel(client).finally(() => setTimeout(() => listening.abort(new Error('cancelled')), CANCEL_GRACE_MS).unref());
  };
  if (options.signal.aborted) throw new HearthError('invalid_request_error', 'The run was cancelled before the task was sent.');
  options.signal.addEventListener('abort', cancel, { once: true });
  try {
    if (options.agent.card.capabilities?.streaming === true) {
      for await (const event of client.sendMessageStream(request, { signal: listening.signal })) {
        task.stream(event);
        if (task.final) break;
      }
    } else {
      const first = await client.sendMessage(
        { ...request, configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true } },
        { signal: listening.signal },
      );
      if (isMessage(first)) task.message(first);
      else await task.poll(client, first, listening.signal, options.pollIntervalMs ?? 500);
    }
  } catch (error) {
    if (!listening.signal.aborted) throw agentError(options.agent, error);
  } finally {
    options.signal.removeEventListener('abort', cancel);
  }
  return task.outcome(options.signal.aborted);
}

async function clientFor(options: DispatchOptions): Promise<Client> {
  const legacyCompat = { enabled: true };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [
        new JsonRpcTransportFactory({ fetchImpl: options.fetchImpl, legacyCompat }),
        new RestTransportFactory({ fetchImpl: options.fetchImpl, legacyCompat }),
      ],
    }),
  );
  try {
    return await factory.createFromAgentCard(options.agent.card);
  } catch (error) {
    throw agentError(options.agent, error);
  }
}

function userMessage(text: string, contextId: string | undefined): Message {
  return {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    taskId: '',
    contextId: contextId ?? '',
    extensions: [],
    metadata: {},
    referenceTaskIds: [],
  };
}

function isMessage(value: Message | Task): value is Message {
  return 'messageId' in value && !('status' in value);
}

function messageText(message: Message | undefined): string | null {
  const text = (message?.parts ?? []).map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
  return text || null;
}

function agentError(agent: CloudAgent, error: unknown): HearthError {
  if (error instanceof HearthError) return error;
  return new HearthError('cloud_agent_error', `The cloud agent ${agent.id} failed: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
  });
}

/** The task as Hearth has seen it so far: its state, its artifacts (and how much of each), its text. */
class TaskFollower {
  taskId: string | null = null;
  contextId: string | null = null;
  state: CloudTaskState = 'submitted';
  lastMessage: string | null = null;
  text = '';
  /** Per artifact id: how much of its text has been reported (present once it was written). */
  private readonly seen = new Map<string, number>();

  constructor(private readonly options: DispatchOptions) {}

  get final(): boolean {
    return FINAL.has(this.state);
  }

  stream(event: StreamResponse): void {
    const payload = event.payload;
    if (!payload) return;
    if (payload.$case === 'task') this.snapshot(payload.value);
    else if (payload.$case === 'message') this.message(payload.value);
    else if (payload.$case === 'statusUpdate') {
      this.taskId ??= payload.value.taskId;
      if (payload.value.status) this.status(STATES[payload.value.status.state] ?? 'unknown', messageText(payload.value.status.message));
    } else if (payload.value.artifact) {
      this.taskId ??= payload.value.taskId;
      const artifact = payload.value.artifact;
      const stored = this.options.artifacts.write(artifact, payload.value.append);
      const text = artifactText(artifact);
      this.seen.set(artifact.artifactId, (payload.value.append ? (this.seen.get(artifact.artifactId) ?? 0) : 0) + text.length);
      this.say(text);
      this.options.onEvent({ kind: 'artifact', artifact: stored });
    }
  }

  /** A direct reply instead of a task: its text is the answer. */
  message(message: Message): void {
    this.contextId ||= message.contextId || null;
    this.say(messageText(message) ?? '');
    this.state = 'completed';
  }

  async poll(client: Client, first: Task, signal: AbortSignal, intervalMs: number): Promise<void> {
    this.snapshot(first);
    let wait = intervalMs;
    while (!this.final) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, wait);
        signal.addEventListener('abort', done, { once: true });
      });
      if (signal.aborted) return;
      this.snapshot(await client.getTask({ tenant: '', id: first.id, historyLength: 0 }, { signal }));
      wait = Math.min(wait * 1.5, 5000);
    }
  }

  async cancel(client: Client): Promise<void> {
    if (!this.taskId || this.final) return;
    try {
      const task = await client.cancelTask({ tenant: '', id: this.taskId, metadata: {} }, { signal: AbortSignal.timeout(CANCEL_GRACE_MS) });
      this.snapshot(task);
    } catch {
      // The agent may have finished meanwhile, or refuse: the stream or the next poll says what happened.
    }
  }

  outcome(cancelled: boolean): CloudTaskOutcome {
    const state = cancelled && !this.final ? 'canceled' : this.state;
    return { taskId: this.taskId, contextId: this.contextId, state, text: this.text, message: this.lastMessage, artifacts: this.options.artifacts.list() };
  }

  /** A whole task (first answer, poll, cancel): new state, and artifacts not seen in full yet. */
  private snapshot(task: Task): void {
    this.taskId ??= task.id;
    this.contextId ||= task.contextId || null;
    for (const artifact of task.artifacts ?? []) {
      const text = artifactText(artifact);
      const reported = this.seen.get(artifact.artifactId);
      if (reported !== undefined && reported >= text.length) continue;
      this.seen.set(artifact.artifactId, text.length);
      const stored = this.options.artifacts.write(artifact, false);
      this.say(text.slice(reported ?? 0));
      this.options.onEvent({ kind: 'artifact', artifact: stored });
    }
    if (task.status) this.status(STATES[task.status.state] ?? 'unknown', messageText(task.status.message));
  }

  private status(state: CloudTaskState, message: string | null): void {
    if (state === this.state && message === null) return;
    this.state = state;
    if (message) this.lastMessage = message;
    this.options.onEvent({ kind: 'status', task_id: this.taskId ?? '', state, message });
    // The final word of the agent is part of the answer.
    if (FINAL.has(state) && message) this.say(`${this.text ? '\n\n' : ''}${message}`);
  }

  private say(delta: string): void {
    if (!delta) return;
    this.text += delta;
    this.options.onEvent({ kind: 'text', delta });
  }
}
