import type { AgentRunEventBody, AgentRunEventType, AgentRunStep, AgentRunUsage, AgentToolCall, ToolCallDecision } from '#shared/api/agents.js';
import type { ToolApproval, ToolClass } from '#shared/api/config.js';
import type { RunFailureCode } from '#shared/api/failures.js';
import type { DrivenOutcome } from '../../agents/driven-run.js';
import { isRunFailureCode } from '../../failures.js';
import { isObject, parseJson } from '../../json.js';

/**
 * One event of a paired host's run stream, as this companion will use it: rebuilt field by field
 * from the event types it knows, never passed on as the host wrote it. A host is another machine:
 * what it sends is data, and only the fields named here, with the types named here, survive.
 */
export type RelayedEvent =
  | { kind: 'created'; sequence: number; hostRun: string }
  | { kind: 'event'; sequence: number; body: AgentRunEventBody }
  | { kind: 'end'; sequence: number; outcome: DrivenOutcome };

/** What a host's run id must look like: it is put into request paths on the channel. */
const RUN_ID = /^run_[A-Za-z0-9_-]{1,64}$/;
const CLASSES: readonly ToolClass[] = ['read', 'write', 'exec', 'network'];
const APPROVALS: readonly ToolApproval[] = ['auto', 'ask', 'deny'];
const DECISIONS: readonly ToolCallDecision[] = ['auto', 'approved', 'denied', 'policy_denied', 'timed_out', 'cancelled', 'unavailable'];
/** Longest identifier (call, approval, tool name, error code) taken from a host. */
const NAME_CHARS = 256;

type Fields = Record<string, unknown>;

/**
 * Parses one SSE `data:` of a host's run stream. Undefined means: drop it. Dropped are anything
 * that is not JSON of a known event type with well-typed fields, and every `artifact.created`:
 * an artifact's file lives on the host, and its `path` would name a file here, which no host may
 * choose (the agents a host grants run locally there and publish no artifacts to devices).
 */
export function relayedEvent(data: string): RelayedEvent | undefined {
  const event = parseJson(data);
  if (!isObject(event)) return undefined;
  const sequence = event.sequence;
  if (!Number.isSafeInteger(sequence) || (sequence as number) < 1) return undefined;
  const at = sequence as number;
  const type = event.type;
  if (typeof type !== 'string' || !Object.hasOwn(RELAY, type)) return undefined;
  try {
    return RELAY[type as AgentRunEventType](event, at);
  } catch (error) {
    if (error instanceof Malformed) return undefined;
    throw error;
  }
}

/**
 * How each known event type is rebuilt from a host's fields. A Record over every type: a new
 * event type does not compile until it says here whether and how a host's copy is relayed.
 */
const RELAY: Record<AgentRunEventType, (event: Fields, sequence: number) => RelayedEvent | undefined> = {
  'run.created': (event, sequence) => {
    const id = text(object(event.run).id, 100);
    return RUN_ID.test(id) ? { kind: 'created', sequence, hostRun: id } : undefined;
  },
  'message.delta': (event, sequence) => ({ kind: 'event', sequence, body: { type: 'message.delta', step: count(event.step), delta: text(event.delta) } }),
  'tool_call.created': (event, sequence) => ({ kind: 'event', sequence, body: { type: 'tool_call.created', step: count(event.step), ...call(event) } }),
  'tool_call.approval_required': (event, sequence) => ({
    kind: 'event',
    sequence,
    body: {
      type: 'tool_call.approval_required',
      step: count(event.step),
      approval_id: text(event.approval_id, NAME_CHARS),
      ...call(event),
      expires_at: count(event.expires_at),
    },
  }),
  'tool_call.completed': (event, sequence) => ({
    kind: 'event',
    sequence,
    body: {
      type: 'tool_call.completed',
      step: count(event.step),
      call_id: text(event.call_id, NAME_CHARS),
      name: text(event.name, NAME_CHARS),
      output: text(event.output),
      is_error: flag(event.is_error),
    },
  }),
  // An artifact's file lives on the host: its path would name a file here, which no host may choose.
  'artifact.created': () => undefined,
  'run.completed': (event, sequence) => ({ kind: 'end', sequence, outcome: outcome('run.completed', object(event.run), event.error) }),
  'run.failed': (event, sequence) => ({ kind: 'end', sequence, outcome: outcome('run.failed', object(event.run), event.error) }),
  'run.cancelled': (event, sequence) => ({ kind: 'end', sequence, outcome: outcome('run.cancelled', object(event.run), event.error) }),
};

function outcome(type: 'run.completed' | 'run.failed' | 'run.cancelled', run: Fields, eventError: unknown): DrivenOutcome {
  const status = type === 'run.completed' ? 'completed' : type === 'run.cancelled' ? 'cancelled' : 'failed';
  const steps = Array.isArray(run.steps) ? run.steps.map(step) : [];
  const reported = isObject(eventError) ? eventError : isObject(run.error) ? run.error : undefined;
  const error =
    status === 'failed'
      ? {
          // A code this version does not know (a newer host's) is the host's failure; its words stay.
          code: runFailureCode(reported ? text(reported.code, NAME_CHARS) : ''),
          message: reported ? text(reported.message, 10_000) : 'The run failed on the host.',
        }
      : undefined;
  return { status, outputText: optionalText(run.output_text), steps, usage: usage(run.usage), ...(error ? { error } : {}) };
}

/** A host's failure code, if this version knows it; any other is the host's failure (`remote_error`). */
function runFailureCode(code: string): RunFailureCode {
  return isRunFailureCode(code) ? code : 'remote_error';
}

function step(value: unknown): AgentRunStep {
  const fields = object(value);
  return {
    index: count(fields.index),
    text: optionalText(fields.text),
    tool_calls: Array.isArray(fields.tool_calls) ? fields.tool_calls.map(toolCall) : [],
    usage: usage(fields.usage),
    started_at: count(fields.started_at),
    completed_at: fields.completed_at === null ? null : count(fields.completed_at),
  };
}

function toolCall(value: unknown): AgentToolCall {
  const fields = object(value);
  return {
    ...call(fields),
    class: oneOf(fields.class, CLASSES),
    policy: oneOf(fields.policy, APPROVALS),
    decision: oneOf(fields.decision, DECISIONS),
    approval_id: fields.approval_id === null || fields.approval_id === undefined ? null : text(fields.approval_id, NAME_CHARS),
    output: typeof fields.output === 'string' ? fields.output : null,
    is_error: flag(fields.is_error),
  };
}

function call(fields: Fields): { call_id: string; name: string; arguments: string } {
  return { call_id: text(fields.call_id, NAME_CHARS), name: text(fields.name, NAME_CHARS), arguments: text(fields.arguments) };
}

function usage(value: unknown): AgentRunUsage {
  const fields = isObject(value) ? value : {};
  const tokens = (entry: unknown) => (Number.isSafeInteger(entry) && (entry as number) >= 0 ? (entry as number) : 0);
  return { prompt_tokens: tokens(fields.prompt_tokens), completion_tokens: tokens(fields.completion_tokens), total_tokens: tokens(fields.total_tokens) };
}

/** A field that does not have its type: the whole event is dropped. */
class Malformed extends Error {}

function object(value: unknown): Fields {
  if (!isObject(value)) throw new Malformed();
  return value;
}

function text(value: unknown, maxChars = Number.POSITIVE_INFINITY): string {
  if (typeof value !== 'string' || value.length > maxChars) throw new Malformed();
  return value;
}

function optionalText(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function count(value: unknown): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0) throw new Malformed();
  return value as number;
}

function flag(value: unknown): boolean {
  if (typeof value !== 'boolean') throw new Malformed();
  return value;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[]): T | null {
  return allowed.includes(value as T) ? (value as T) : null;
}
