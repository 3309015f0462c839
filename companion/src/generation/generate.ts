/**
 * The one generation path every dialect translates onto (chat completions' local turns, Anthropic
 * Messages, Ollama's API, agents): a protocol-neutral `GenerationRequest` on a model id, run on
 * the local engine, or sent to the provider that serves the model as a chat-completions request
 * (the provider's own tool calling), with the same result and the same streamed events either way.
 * Budgets, grammars, tool-call parsing and attribution stay where they are; a dialect only
 * converts its request in and its events out.
 */
import type { RemoteImageSettings } from '#shared/api/config.js';
import { HearthError } from '../errors.js';
import type { Engine } from '../inference/engine.js';
import type { GenerationRequest, GenerationResult, StopReason, ToolMode } from '../inference/types.js';
import type { ModelCatalog } from '../models/catalog.js';
import type { LocalModel } from '../models/registry.js';
import { chatMessages, chatTools, readChatAnswer } from '../providers/chat-stream.js';
import type { ProviderClient } from '../providers/client.js';
import { withCallSignal } from './call-signal.js';
import { checkedMedia } from './media-check.js';
import { effortOf } from './effort.js';

/** What resolving a model needs; read at each call, so an applied configuration governs. */
export interface GenerationSources {
  catalog: ModelCatalog;
  engine: Engine;
  providers(): ProviderClient;
  /** models.remote_images as configured now (left out: remote images are refused). */
  remoteImages?(): RemoteImageSettings;
}

/** A model ready to generate: local (the engine) or a provider's. */
export interface Generator {
  /** The model id as the client named it (`<provider>/<model>` for a provider's). */
  id: string;
  /** The local model's record; null for a provider's model. */
  local: LocalModel | null;
  /**
   * Runs one generation. Text and thought stream to `onText` / `onReasoning`; a cancelled request
   * resolves with finish reason `cancelled`. `affinity` keeps a provider pool's calls of one
   * conversation on one endpoint (its prompt cache).
   */
  run(request: GenerationRequest, options?: { affinity?: string[] }): Promise<GenerationResult>;
}

/** The model named `id`, or the catalog's error (404 model_not_found). */
export async function resolveGenerator(sources: GenerationSources, id: string): Promise<Generator> {
  const target = await sources.catalog.resolve(id);
  if (target.kind === 'local') return localGenerator(sources, target.info);
  return { id: target.id, local: null, run: (request, options) => runOnProvider(sources.providers(), target.id, request, options?.affinity ?? []) };
}

/**
 * A local model's generator, for a route that resolved the model itself (chat completions and
 * Responses forward a provider's model as it came). Images are fetched where remote, decoded,
 * checked and converted for the projector first (media-check.ts).
 */
export function localGenerator(sources: { engine: Pick<Engine, 'run'>; remoteImages?(): RemoteImageSettings }, info: LocalModel): Generator {
  return { id: info.id, local: info, run: async (request) => sources.engine.run(info, await checkedMedia(request, sources.remoteImages?.())) };
}

async function runOnProvider(providers: ProviderClient, id: string, request: GenerationRequest, affinity: string[]): Promise<GenerationResult> {
  if (request.raw)
    throw new HearthError('invalid_request_error', `${id} is a provider's model: send raw prompts for it to POST /v1/completions, which forwards them.`, {
      param: 'model',
    });
  const provider = id.slice(0, id.indexOf('/'));
  try {
    const turn = await withCallSignal(request.signal, async (signal) => {
      const response = await providers.forward('/chat/completions', id, providerBody(request), signal, { affinity });
      // An error answer names the provider and never carries its secrets.
      if (!response.ok) throw await providers.failure(provider, response);
      return readChatAnswer(response, (delta) => request.onText?.(delta), provider, request.onReasoning);
    });
    if (request.signal.aborted) return cancelled();
    return {
      text: turn.text,
      toolCalls: turn.toolCalls,
      finishReason: turn.toolCalls.length > 0 ? 'tool_calls' : stopReasonOf(turn.finishReason),
      promptTokens: turn.promptTokens,
      completionTokens: turn.completionTokens,
      reasoning: turn.reasoning,
    };
  } catch (error) {
    if (request.signal.aborted) return cancelled();
    throw error;
  }
}

/** A neutral request as the chat-completions body a provider gets. */
export function providerBody(request: GenerationRequest): Record<string, unknown> {
  const sampling = request.sampling;
  const tools = request.tools;
  return {
    messages: chatMessages(request.history),
    stream: true,
    stream_options: { include_usage: true },
    ...(tools.length > 0 ? { tools: chatTools(tools), tool_choice: toolChoiceOf(request.toolMode) } : {}),
    ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
    ...(sampling.temperature !== undefined ? { temperature: sampling.temperature } : {}),
    ...(sampling.topP !== undefined ? { top_p: sampling.topP } : {}),
    ...(sampling.seed !== undefined ? { seed: sampling.seed } : {}),
    ...(sampling.presencePenalty !== undefined ? { presence_penalty: sampling.presencePenalty } : {}),
    ...(sampling.frequencyPenalty !== undefined ? { frequency_penalty: sampling.frequencyPenalty } : {}),
    ...(request.stop.length > 0 ? { stop: request.stop } : {}),
    ...reasoningFields(request),
    ...(request.output.type === 'json'
      ? {
          response_format: request.output.schema
            ? { type: 'json_schema', json_schema: { name: 'output', schema: request.output.schema } }
            : { type: 'json_object' },
        }
      : {}),
  };
}

/** A thought budget (Anthropic's `thinking`, Ollama's `think`) as the provider's `reasoning_effort`. */
function reasoningFields(request: GenerationRequest): Record<string, unknown> {
  const effort = effortOf(request.reasoning, request.maxTokens);
  return effort ? { reasoning_effort: effort } : {};
}

function toolChoiceOf(mode: ToolMode): unknown {
  return mode.type === 'named' ? { type: 'function', function: { name: mode.name } } : mode.type;
}

function stopReasonOf(finish: string | null): StopReason {
  return finish === 'length' ? 'length' : finish === 'tool_calls' ? 'tool_calls' : 'stop';
}

function cancelled(): GenerationResult {
  return { text: '', toolCalls: [], finishReason: 'cancelled', promptTokens: 0, completionTokens: 0 };
}
