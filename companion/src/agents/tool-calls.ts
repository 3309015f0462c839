import type { AgentApproval, AgentRunEventBody, AgentRunStep, AgentToolCall } from '#shared/api/agents.js';
import type { ToolCallRecord } from '../inference/types.js';
import { failure, resultText, type ToolResult } from '../tools/result.js';
import type { ApprovalOutcome } from './approvals.js';
import type { AgentTool } from './toolbox.js';

/** What running one tool call needs from the run around it. */
export interface ToolCallEffects {
  emit(event: AgentRunEventBody): void;
  /** The run now waits for the owner (true) or runs again (false). */
  waiting(waiting: boolean): void;
  /** Records a call of a step as it stands now: when it is created, when it waits for approval, when it ends. */
  record(step: number, position: number, call: AgentToolCall): void;
  /** Runs many small writes (records, events) as one. */
  batch<T>(work: () => T): T;
  /** Records a pending approval; the outcome settles once. */
  approve(tool: AgentTool, call: ToolCallRecord): { approval: AgentApproval; outcome: Promise<ApprovalOutcome> };
  execute(tool: AgentTool, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult>;
  /** Most bytes of output the model gets back from one call. */
  outputLimit: number;
  signal: AbortSignal;
}

function parseArguments(text: string): Record<string, unknown> | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text || '{}');
  } catch {
    return 'The arguments are not valid JSON. Call the tool again with a JSON object of arguments.';
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'The arguments must be a JSON object.';
  return parsed as Record<string, unknown>;
}

/** What the model reads when the owner or the clock said no. */
export function declined(name: string, outcome: ApprovalOutcome): string {
  if (outcome.decision === 'timed_out')
    return `The call to "${name}" was not run: it needed the owner's approval and none came in time (${outcome.reason ?? 'timed out'}), which counts as a denial. Do not retry it now; continue without it or say what you needed.`;
  if (outcome.decision === 'cancelled') return `The call to "${name}" was not run: the run was cancelled.`;
  const reason = outcome.reason?.trim();
  return `The owner denied the call to "${name}"${reason ? `: ${asSentence(reason)}` : '.'} It was not run. Do not retry it; continue without it.`;
}

/** The owner's words as a sentence: without a full stop of their own they get one, so the next sentence does not run on ("not now It was not run."). */
function asSentence(text: string): string {
  return /[.!?…]["'”’)\]]*$/.test(text) ? text : `${text}.`;
}

/**
 * Decides and runs one tool call: an unknown tool and a denied one are answered with a tool
 * error the model can act on; `ask` waits for the owner; `auto` and an approval run it. The
 * call's record joins the step at once and is completed in place; its output is what the model
 * reads (with the result's images, for a model that reads them: tool-images.ts).
 */
export async function runToolCall(
  step: AgentRunStep,
  call: ToolCallRecord,
  box: Map<string, AgentTool>,
  effects: ToolCallEffects,
): Promise<{ record: AgentToolCall; result: ToolResult }> {
  const { record, position } = createCall(step, call, box.get(call.name), effects);
  const result = await decideAndRun(step.index, call, box.get(call.name), box, { record, save: () => effects.record(step.index, position, record) }, effects);
  completeCall(step, position, record, result, effects);
  return { record, result };
}

/** The call joins its step, recorded at once (a crash during it still leaves it in the run), and tool_call.created goes out. */
function createCall(
  step: AgentRunStep,
  call: ToolCallRecord,
  tool: AgentTool | undefined,
  effects: ToolCallEffects,
): { record: AgentToolCall; position: number } {
  const record: AgentToolCall = {
    call_id: call.id,
    name: call.name,
    arguments: call.arguments,
    class: tool?.class ?? null,
    policy: tool?.policy ?? null,
    decision: null,
    approval_id: null,
    output: null,
    is_error: false,
  };
  const position = step.tool_calls.push(record) - 1;
  effects.record(step.index, position, record);
  effects.emit({ type: 'tool_call.created', step: step.index, call_id: call.id, name: call.name, arguments: call.arguments });
  return { record, position };
}

function completeCall(step: AgentRunStep, position: number, record: AgentToolCall, result: ToolResult, effects: ToolCallEffects): void {
  record.output = resultText(result, effects.outputLimit);
  record.is_error = result.isError === true;
  effects.record(step.index, position, record);
  effects.emit({ type: 'tool_call.completed', step: step.index, call_id: record.call_id, name: record.name, output: record.output, is_error: record.is_error });
}

/** Calls of one reply answered at a time before the loop lets other work run. */
const REFUSALS_PER_TURN = 256;

/**
 * The calls of a reply past the per-step cap: none runs; each is recorded and answered with a
 * tool error that names the cap, in batches that let the event loop breathe in between.
 */
export async function refuseOverCap(
  step: AgentRunStep,
  calls: ToolCallRecord[],
  { cap, total, box }: { cap: number; total: number; box: Map<string, AgentTool> },
  effects: ToolCallEffects,
): Promise<AgentToolCall[]> {
  const refusal = failure(
    `Not run: this reply asked for ${total} tool calls and at most ${cap} are run per reply. Ask again for the ones you still need, fewer at a time.`,
  );
  const records: AgentToolCall[] = [];
  for (let start = 0; start < calls.length; start += REFUSALS_PER_TURN) {
    effects.batch(() => {
      for (const call of calls.slice(start, start + REFUSALS_PER_TURN)) {
        const { record, position } = createCall(step, call, box.get(call.name), effects);
        completeCall(step, position, record, refusal, effects);
        records.push(record);
      }
    });
    await new Promise((resolve) => setImmediate(resolve));
  }
  return records;
}

async function decideAndRun(
  step: number,
  call: ToolCallRecord,
  tool: AgentTool | undefined,
  box: Map<string, AgentTool>,
  { record, save }: { record: AgentToolCall; save(): void },
  effects: ToolCallEffects,
): Promise<ToolResult> {
  if (!tool) {
    record.decision = 'unavailable';
    const offered = [...box.values()].filter((entry) => entry.policy !== 'deny').map((entry) => entry.name);
    return failure(`There is no tool "${call.name}" for this agent. Its tools: ${offered.join(', ') || 'none'}.`);
  }
  if (tool.policy === 'deny') {
    record.decision = 'policy_denied';
    return failure(`This agent's policy denies "${call.name}" (${tool.class} tool). It was not run; do not call it again.`);
  }
  const args = parseArguments(call.arguments);
  if (typeof args === 'string') return failure(args);
  const problems = tool.entry.validate(args);
  if (problems.length > 0)
    return failure(`The arguments do not match the tool's schema: ${problems.map((problem) => `${problem.path} ${problem.message}`).join('; ')}.`);
  if (tool.policy === 'ask') {
    const { approval, outcome } = effects.approve(tool, call);
    record.approval_id = approval.id;
    save();
    effects.emit({
      type: 'tool_call.approval_required',
      step,
      approval_id: approval.id,
      call_id: call.id,
      name: call.name,
      arguments: call.arguments,
      expires_at: approval.expires_at,
    });
    effects.waiting(true);
    const settled = await outcome;
    effects.waiting(false);
    record.decision = settled.decision;
    if (settled.decision !== 'approved') return failure(declined(call.name, settled));
  } else {
    record.decision = 'auto';
    save();
  }
  if (effects.signal.aborted) return failure('The run was cancelled before the call ran.');
  try {
    return await effects.execute(tool, args, effects.signal);
  } catch (error) {
    return failure(error instanceof Error ? error.message : String(error));
  }
}
