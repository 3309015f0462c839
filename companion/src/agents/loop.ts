import type { AgentRunError, AgentRunEventBody, AgentRunStep, AgentRunUsage } from '#shared/api/agents.js';
import type { AgentSettings } from '#shared/api/config.js';
import { HearthError } from '../errors.js';
import { unixSeconds } from '../ids.js';
import type { HistoryItem } from '../inference/types.js';
import type { AgentModel, ModelTurn } from './model.js';
import { refuseOverCap, runToolCall, type ToolCallEffects } from './tool-calls.js';
import { toolResultItem } from './tool-images.js';
import { offeredTools, type AgentTool } from './toolbox.js';

/** Everything one run works from. */
export interface RunSetup {
  agent: AgentSettings;
  model: AgentModel;
  /** The system message, the conversation so far and the caller's input. */
  history: HistoryItem[];
  toolbox: Map<string, AgentTool>;
  signal: AbortSignal;
}

/** How the run reaches the world: events out, approvals and tool execution in. */
export interface RunEffects extends Omit<ToolCallEffects, 'signal' | 'waiting'> {
  emit(event: AgentRunEventBody): void;
  /** The steps changed; `waiting` while a tool call waits for the owner. */
  progress(steps: AgentRunStep[], waiting: boolean): void;
}

/** Most tool calls of one model reply that are run; the rest are answered with a tool error naming this cap. */
export const MAX_TOOL_CALLS_PER_STEP = 64;

export interface RunOutcome {
  status: 'completed' | 'failed' | 'cancelled';
  outputText: string;
  steps: AgentRunStep[];
  usage: AgentRunUsage;
  error?: AgentRunError;
  /** What the run adds to its conversation's history (assistant turns and tool results). */
  messages: HistoryItem[];
}

function add(usage: AgentRunUsage, turn: Pick<ModelTurn, 'promptTokens' | 'completionTokens'>): void {
  usage.prompt_tokens += turn.promptTokens;
  usage.completion_tokens += turn.completionTokens;
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
}

/** A model failure as the run records it: the error table's code and message (internal errors stay generic). */
export function runError(error: unknown): AgentRunError {
  if (error instanceof HearthError) return { code: error.code, message: error.message };
  return { code: 'internal_error', message: 'The run failed unexpectedly; details are in the server log.' };
}

/**
 * The agent loop: a model call with the tools the policy offers, then each tool call decided by
 * policy (auto runs, deny answers a tool error, ask waits for the owner), and again, until the
 * model answers without tool calls (completed) or `max_steps` model calls were made (failed,
 * max_steps_exceeded). Cancellation (the signal) stops a model call or a tool at once. It emits
 * typed events and never touches HTTP: routes, paired devices and tests share it.
 */
export async function executeRun(setup: RunSetup, effects: RunEffects): Promise<RunOutcome> {
  const { agent, toolbox, signal } = setup;
  const run: RunState = {
    history: [...setup.history],
    tools: offeredTools(toolbox),
    steps: [],
    messages: [],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  };
  const end = (status: RunOutcome['status'], outputText = '', error?: AgentRunError): RunOutcome => ({
    status,
    outputText,
    steps: run.steps,
    usage: run.usage,
    messages: run.messages,
    ...(error ? { error } : {}),
  });
  const callEffects: ToolCallEffects = { ...effects, signal, waiting: (waiting) => effects.progress(run.steps, waiting) };

  for (let index = 0; ; index++) {
    if (signal.aborted) return end('cancelled');
    const step: AgentRunStep = { index, text: '', tool_calls: [], usage: zeroUsage(), started_at: unixSeconds(), completed_at: null };
    run.steps.push(step);
    effects.progress(run.steps, false);
    const turn = await callModel(setup, effects, run, step);
    if (!('toolCalls' in turn)) return signal.aborted ? end('cancelled') : end('failed', '', turn.error);
    if (turn.cancelled || signal.aborted) return end('cancelled');
    if (turn.toolCalls.length === 0) {
      run.messages.push({ role: 'assistant', text: turn.text, toolCalls: [] });
      effects.progress(run.steps, false);
      return end('completed', turn.text);
    }
    if (index + 1 >= agent.max_steps) {
      const names = turn.toolCalls.map((call) => call.name).join(', ');
      return end('failed', '', {
        code: 'max_steps_exceeded',
        message: `The agent still asked for tools (${names}) after ${agent.max_steps} model calls (max_steps); they were not run.`,
      });
    }
    const asked: HistoryItem = { role: 'assistant', text: turn.text, toolCalls: turn.toolCalls };
    run.history.push(asked);
    run.messages.push(asked);
    step.completed_at = null;
    for (const call of turn.toolCalls.slice(0, MAX_TOOL_CALLS_PER_STEP)) {
      const { result } = await runToolCall(step, call, toolbox, callEffects);
      answered(run, await toolResultItem(call, result, effects.outputLimit, setup.model));
      effects.progress(run.steps, false);
      if (signal.aborted) return end('cancelled');
      // A tool that answers at once must not keep the event loop to itself for a whole step.
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (turn.toolCalls.length > MAX_TOOL_CALLS_PER_STEP) {
      const extra = turn.toolCalls.slice(MAX_TOOL_CALLS_PER_STEP);
      const limits = { cap: MAX_TOOL_CALLS_PER_STEP, total: turn.toolCalls.length, box: toolbox };
      const refused = await refuseOverCap(step, extra, limits, callEffects);
      refused.forEach((record) => answered(run, { role: 'tool', callId: record.call_id, output: record.output ?? '' }));
      effects.progress(run.steps, false);
      if (signal.aborted) return end('cancelled');
    }
    step.completed_at = unixSeconds();
  }
}

/** What a run accumulates as it goes. */
interface RunState {
  history: HistoryItem[];
  tools: ReturnType<typeof offeredTools>;
  steps: AgentRunStep[];
  messages: HistoryItem[];
  usage: AgentRunUsage;
}

/** A call's result joins the history the model reads next. */
function answered(run: RunState, result: HistoryItem): void {
  run.history.push(result);
  run.messages.push(result);
}

const zeroUsage = (): AgentRunUsage => ({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

/** One model call of the run: its text streams out as message.delta; a failure comes back as the run's error. */
async function callModel(setup: RunSetup, effects: RunEffects, run: RunState, step: AgentRunStep): Promise<ModelTurn | { error: AgentRunError }> {
  const { agent, model, signal } = setup;
  try {
    const turn = await model.call({
      history: run.history,
      tools: run.tools,
      toolMode: step.index === 0 && agent.tool_choice === 'required' ? 'required' : 'auto',
      temperature: agent.temperature,
      maxTokens: agent.max_tokens,
      signal,
      onText: (delta) => {
        if (!delta) return;
        step.text += delta;
        effects.emit({ type: 'message.delta', step: step.index, delta });
      },
    });
    step.text = turn.text;
    add(step.usage, turn);
    add(run.usage, turn);
    return turn;
  } catch (error) {
    return { error: runError(error) };
  } finally {
    step.completed_at = unixSeconds();
  }
}
