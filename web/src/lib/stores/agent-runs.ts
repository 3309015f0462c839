/** What the Agents screen shows of a run, built from its events (live) or its stored record (history). */
import { plural } from '$lib/words';
import type { AgentRun, AgentRunEvent, AgentRunStatus, AgentRunUsage } from '#shared/api/agents.js';

export interface ToolCallView {
  callId: string;
  name: string;
  /** JSON text as the model wrote it. */
  arguments: string;
  output: string | null;
  isError: boolean;
  /** Waiting for the owner: the approval to decide inline. */
  approval: { id: string; expiresAt: number; decided: boolean } | null;
}

export interface StepView {
  index: number;
  text: string;
  calls: ToolCallView[];
}

export interface RunView {
  id: string;
  agentId: string;
  conversationId: string;
  status: AgentRunStatus;
  input: string;
  steps: StepView[];
  output: string;
  error: string | null;
  /** The last event applied: following resumes after it. */
  sequence: number;
  /** Tokens of all its model calls (the run's figures: final when it has ended). */
  usage: AgentRunUsage;
  /** Unix seconds. */
  createdAt: number;
  completedAt: number | null;
}

const inputText = (run: AgentRun) =>
  run.input
    .filter((message) => message.role === 'user')
    .map((message) => (typeof message.content === 'string' ? message.content : message.content.map((part) => ('text' in part ? part.text : '')).join('')))
    .join('\n');

/** A stored run as the screen shows it. */
export function viewOfRun(run: AgentRun, sequence = 0): RunView {
  return {
    id: run.id,
    agentId: run.agent_id,
    conversationId: run.conversation_id,
    status: run.status,
    input: inputText(run),
    steps: run.steps.map((step) => ({
      index: step.index,
      text: step.text,
      calls: step.tool_calls.map((call) => ({
        callId: call.call_id,
        name: call.name,
        arguments: call.arguments,
        output: call.output,
        isError: call.is_error,
        approval:
          call.approval_id && call.output === null && run.status === 'awaiting_approval' ? { id: call.approval_id, expiresAt: 0, decided: false } : null,
      })),
    })),
    output: run.output_text,
    error: run.error ? run.error.message : null,
    sequence,
    usage: run.usage,
    createdAt: run.created_at,
    completedAt: run.completed_at,
  };
}

function stepOf(view: RunView, index: number): StepView {
  let step = view.steps.find((entry) => entry.index === index);
  if (!step) {
    step = { index, text: '', calls: [] };
    view.steps.push(step);
  }
  return step;
}

function callOf(view: RunView, index: number, callId: string): ToolCallView | undefined {
  return stepOf(view, index).calls.find((call) => call.callId === callId);
}

/** Applies one event to the view (a new object each time; events already applied are skipped). */
export function applyEvent(current: RunView | null, event: AgentRunEvent): RunView {
  if (current && event.sequence <= current.sequence) return current;
  if ('run' in event) {
    // run.created and the end carry the whole run: the view is rebuilt from it.
    if (event.type !== 'run.created' || !current) return { ...viewOfRun(event.run), sequence: event.sequence };
  }
  if (!current) throw new Error(`A run's events start with run.created (got ${event.type}).`);
  const view = plain(current);
  view.sequence = event.sequence;
  switch (event.type) {
    case 'message.delta':
      stepOf(view, event.step).text += event.delta;
      break;
    case 'tool_call.created':
      stepOf(view, event.step).calls.push({
        callId: event.call_id,
        name: event.name,
        arguments: event.arguments,
        output: null,
        isError: false,
        approval: null,
      });
      break;
    case 'tool_call.approval_required': {
      const call = callOf(view, event.step, event.call_id);
      if (call) call.approval = { id: event.approval_id, expiresAt: event.expires_at, decided: false };
      view.status = 'awaiting_approval';
      break;
    }
    case 'tool_call.completed': {
      const call = callOf(view, event.step, event.call_id);
      if (call) Object.assign(call, { output: event.output, isError: event.is_error, approval: call.approval && { ...call.approval, decided: true } });
      view.status = 'running';
      break;
    }
    // A cloud agent's artifact is in the run, which the end event brings whole; run.created again changes nothing.
    case 'artifact.created':
    case 'run.created':
      break;
    default:
      // The end events, which carry the whole run, were applied above. A newer companion's event
      // this app does not know yet is skipped, not fatal.
      knownEvent(event);
  }
  return view;
}

/** Compiles only while every event type of the union has its case above (its argument is then `never`). */
function knownEvent(event: never): void {
  void event;
}

/** A copy as plain data (the view may be a Svelte state proxy). */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export const FINISHED: ReadonlySet<AgentRunStatus> = new Set(['completed', 'failed', 'cancelled']);

/** Tool arguments as the screen shows them: indented JSON, or the text as it is when it is not JSON. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** "1,234 tokens (1,000 prompt, 234 written) · 3 s": what a run used and how long it took. */
export function runFigures(view: Pick<RunView, 'usage' | 'createdAt' | 'completedAt'>): string {
  const { prompt_tokens: prompt, completion_tokens: written, total_tokens: total } = view.usage;
  const parts = total > 0 ? [`${plural(total, 'token')} (${prompt.toLocaleString('en')} prompt, ${written.toLocaleString('en')} written)`] : [];
  if (view.completedAt !== null) {
    const seconds = Math.max(0, view.completedAt - view.createdAt);
    parts.push(seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`);
  }
  return parts.join(' · ');
}
