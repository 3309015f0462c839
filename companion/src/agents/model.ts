import type { Engine } from '../inference/engine.js';
import type { HistoryItem, ToolCallRecord, ToolSpec } from '../inference/types.js';
import type { ModelCatalog } from '../models/catalog.js';
import { chatMessages, chatTools, readChatAnswer } from '../providers/chat-stream.js';
import type { ProviderClient } from '../providers/client.js';

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
  call(call: ModelCall): Promise<ModelTurn>;
}

/** What resolving an agent's model needs; read at each run, so an applied configuration governs. */
export interface ModelSources {
  catalog: ModelCatalog;
  engine: Engine;
  providers(): ProviderClient;
}

/**
 * A signal that follows the run's but is let go after one call: every call adds its own abort
 * listeners, and a long run must not collect them on its one signal.
 */
export async function withCallSignal<T>(parent: AbortSignal, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent.reason);
  if (parent.aborted) onAbort();
  else parent.addEventListener('abort', onAbort, { once: true });
  try {
    return await work(controller.signal);
  } finally {
    parent.removeEventListener('abort', onAbort);
  }
}

/**
 * The agent's model, or the catalog's error (404 model_not_found, model_load_failed).
 * `conversation` keeps a provider pool's calls of one conversation on one endpoint (its prompt cache).
 */
export async function resolveAgentModel(sources: ModelSources, id: string, conversation?: { agent: string; id: string }): Promise<AgentModel> {
  const target = await sources.catalog.resolve(id);
  if (target.kind === 'provider')
    return providerModel(sources.providers(), target.id, conversation ? [`conversation:${conversation.agent}:${conversation.id}`] : []);
  const info = target.info;
  return {
    id: info.id,
    async call(call) {
      const result = await withCallSignal(call.signal, (signal) =>
        sources.engine.run(info, {
          model: info.id,
          history: call.history,
          maxTokens: call.maxTokens,
          sampling: { temperature: call.temperature },
          stop: [],
          tools: call.tools,
          toolMode: call.tools.length === 0 ? { type: 'none' } : { type: call.toolMode },
          output: { type: 'text' },
          signal,
          onText: call.onText,
        }),
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

function providerModel(providers: ProviderClient, id: string, affinity: string[]): AgentModel {
  const provider = id.slice(0, id.indexOf('/'));
  return {
    id,
    async call(call) {
      const body: Record<string, unknown> = {
        messages: chatMessages(call.history),
        stream: true,
        stream_options: { include_usage: true },
        ...(call.tools.length > 0 ? { tools: chatTools(call.tools), tool_choice: call.toolMode } : {}),
        ...(call.temperature !== undefined ? { temperature: call.temperature } : {}),
        ...(call.maxTokens !== undefined ? { max_tokens: call.maxTokens } : {}),
      };
      try {
        const turn = await withCallSignal(call.signal, async (signal) => {
          const response = await providers.forward('/chat/completions', id, body, signal, { affinity });
          // An error answer names the provider and never carries its secrets.
          if (!response.ok) throw await providers.failure(provider, response);
          return readChatAnswer(response, call.onText, provider);
        });
        return { ...turn, cancelled: call.signal.aborted };
      } catch (error) {
        if (call.signal.aborted) return { text: '', toolCalls: [], promptTokens: 0, completionTokens: 0, cancelled: true };
        throw error;
      }
    },
  };
}
