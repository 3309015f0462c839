import { withCallSignal } from '../generation/call-signal.js';
import { resolveGenerator, type GenerationSources } from '../generation/generate.js';
import type { HistoryItem, ToolCallRecord, ToolSpec } from '../inference/types.js';

/** One model call of a run. */
export interface ModelCall {
  history: HistoryItem[];
  tools: ToolSpec[];
  /** `required` forces a tool call (a grammar for local models, `tool_choice` for providers). */
  toolMode: 'auto' | 'required';
  temperature?: number;
  maxTokens?: number;
  signal: AbortSignal;
  onText(delta: string): void;
}

export interface ModelTurn {
  text: string;
  toolCalls: ToolCallRecord[];
  promptTokens: number;
  completionTokens: number;
  /** The call stopped because the run was cancelled. */
  cancelled: boolean;
}

/** A model an agent runs on: local (the engine) or a provider's (its own tool calling). */
export interface AgentModel {
  id: string;
  /** A local model (false: a provider's). */
  local: boolean;
  /** A local model whose projector reads images (capability `vision`): a tool's images reach it as images, not as notes. */
  vision: boolean;
  call(call: ModelCall): Promise<ModelTurn>;
}

/** What resolving an agent's model needs; read at each run, so an applied configuration governs. */
export type ModelSources = GenerationSources;

/**
 * The agent's model, or the catalog's error (404 model_not_found, model_load_failed), on the one
 * generation path (generation/generate.ts). A thought is never the answer: only `text` is kept.
 * `conversation` keeps a provider pool's calls of one conversation on one endpoint (its prompt cache).
 */
export async function resolveAgentModel(sources: ModelSources, id: string, conversation?: { agent: string; id: string }): Promise<AgentModel> {
  const generator = await resolveGenerator(sources, id);
  const affinity = conversation ? [`conversation:${conversation.agent}:${conversation.id}`] : [];
  return {
    id: generator.id,
    local: generator.local !== null,
    vision: generator.local?.capabilities.includes('vision') ?? false,
    async call(call) {
      const result = await withCallSignal(call.signal, (signal) =>
        generator.run(
          {
            model: generator.id,
            history: call.history,
            maxTokens: call.maxTokens,
            sampling: { temperature: call.temperature },
            stop: [],
            tools: call.tools,
            toolMode: call.tools.length === 0 ? { type: 'none' } : { type: call.toolMode },
            output: { type: 'text' },
            signal,
            onText: call.onText,
          },
          { affinity },
        ),
      );
      return {
        text: result.text,
        toolCalls: result.toolCalls,
        promptTokens: result.promptTokens,
        completionTokens: result.completionTokens,
        cancelled: result.finishReason === 'cancelled' || call.signal.aborted,
      };
    },
  };
}
