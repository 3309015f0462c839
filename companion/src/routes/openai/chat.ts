import type { FastifyReply, FastifyRequest } from 'fastify';
import { HearthError } from '../../errors.js';
import { localGenerator } from '../../generation/generate.js';
import { newId, unixSeconds } from '../../ids.js';
import { clientGone, openEventStream } from '../../http/sse.js';
import type { LocalModel } from '../../models/registry.js';
import type { GenerationRequest, GenerationResult } from '../../inference/types.js';
import type { OpenaiContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { nonEmptyString, type BodySchema } from '../schema.js';
import { functionTools } from '../schema-fragments.js';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, FinishReason, Usage } from '#shared/api/openai.js';
import { messagesToHistory, outputOf, stopList, toolModeOf, toolsOf } from './convert.js';
import { attributionOf, lastUserText, recordAttribution, type Attribution } from './attribution.js';
import { forwardToProvider } from './forward.js';
import { effortSchema, reasoningOf } from './reasoning.js';
import { samplingOf, samplingSchema } from './sampling.js';
import { endCut, streamFailed } from './text-stream.js';

const FINGERPRINT = 'hearth';

const content = {
  anyOf: [
    { type: 'string' },
    { type: 'null' },
    {
      type: 'array',
      items: {
        type: 'object',
        required: ['type'],
        // An image_url part (a user message's, a tool result's) holds its URL, an input_audio part its sound; their meaning is checked in convert.ts.
        properties: {
          type: { type: 'string' },
          text: { type: 'string' },
          image_url: { anyOf: [{ type: 'string' }, { type: 'object', properties: { url: { type: 'string' }, detail: { type: 'string' } } }] },
          input_audio: { type: 'object', properties: { data: { type: 'string' }, format: { type: 'string' } } },
        },
      },
    },
  ],
};

/** POST /v1/chat/completions: types are checked here, meaning in convert.ts. */
export const chatCompletionBody = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: nonEmptyString(),
    messages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['role'],
        properties: {
          role: { enum: ['system', 'developer', 'user', 'assistant', 'tool'] },
          content,
          // An earlier answer's thought as the client received it: accepted, and left to the chat format.
          reasoning_content: { type: ['string', 'null'] },
          name: { type: 'string' },
          tool_call_id: { type: 'string' },
          tool_calls: {
            type: 'array',
            items: {
              type: 'object',
              required: ['id', 'function'],
              properties: {
                id: { type: 'string' },
                type: { const: 'function' },
                function: { type: 'object', required: ['name', 'arguments'], properties: { name: { type: 'string' }, arguments: { type: 'string' } } },
              },
            },
          },
        },
      },
    },
    stream: { type: ['boolean', 'null'] },
    stream_options: { type: ['object', 'null'], properties: { include_usage: { type: 'boolean' } } },
    max_tokens: { type: ['integer', 'null'], minimum: 1 },
    max_completion_tokens: { type: ['integer', 'null'], minimum: 1 },
    ...samplingSchema,
    n: { type: ['integer', 'null'], minimum: 1, maximum: 1 },
    logprobs: { type: ['boolean', 'null'] },
    parallel_tool_calls: { type: 'boolean' },
    // OpenAI's limit; both tie requests to a conversation (a provider pool's affinity).
    user: { type: 'string', maxLength: 256 },
    prompt_cache_key: { type: 'string', maxLength: 256 },
    reasoning_effort: effortSchema,
    chat_template_kwargs: { type: ['object', 'null'], properties: { enable_thinking: { type: 'boolean' } } },
    tools: functionTools({ strict: { type: ['boolean', 'null'] } }),
    tool_choice: {
      anyOf: [
        { enum: ['auto', 'none', 'required'] },
        {
          type: 'object',
          required: ['type', 'function'],
          properties: { type: { const: 'function' }, function: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
        },
      ],
    },
    response_format: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { enum: ['text', 'json_object', 'json_schema'] },
        json_schema: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string' }, description: { type: 'string' }, schema: { type: 'object' }, strict: { type: ['boolean', 'null'] } },
        },
      },
    },
  },
} as const satisfies BodySchema<ChatCompletionRequest>;

type Context = Pick<OpenaiContext, 'config' | 'catalog' | 'generation' | 'providers' | 'agents' | 'shutdown'>;

/** One local generation: the model, the request, and whom it is attributed to. */
interface Turn {
  info: LocalModel;
  body: ChatCompletionRequest;
  attribution: Attribution | null;
}

export const chatRoutes: RoutePlugin<OpenaiContext, keyof Context> = async (app, context) => {
  app.post<{ Body: ChatCompletionRequest }>('/v1/chat/completions', { schema: { body: chatCompletionBody } }, async (request, reply) => {
    const body = request.body;
    if (body.logprobs) throw new HearthError('invalid_request_error', 'logprobs is not supported by Hearth.', { param: 'logprobs' });
    const attribution = attributionOf(context, request, reply, lastUserText(body.messages));
    const target = await context.catalog.resolve(body.model);
    if (target.kind === 'provider') {
      const observe = (text: string) => recordAttribution(context, request, attribution, text);
      return forwardToProvider(
        context,
        { path: '/chat/completions', modelId: target.id, body: body as unknown as Record<string, unknown>, observe },
        request,
        reply,
      );
    }
    const turn = { info: target.info, body, attribution };
    return body.stream ? streamLocal(context, turn, request, reply) : answerLocal(context, turn, request, reply);
  });
};

function generationOf(info: LocalModel, body: ChatCompletionRequest, signal: AbortSignal): GenerationRequest {
  const tools = toolsOf(body);
  const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? undefined;
  return {
    model: info.id,
    history: messagesToHistory(body.messages),
    maxTokens,
    reasoning: reasoningOf(body.reasoning_effort, body.chat_template_kwargs?.enable_thinking, maxTokens),
    sampling: samplingOf(body),
    stop: stopList(body.stop),
    tools,
    toolMode: toolModeOf(body.tool_choice, tools),
    output: outputOf(body.response_format),
    signal,
  };
}

async function answerLocal(context: Context, turn: Turn, request: FastifyRequest, reply: FastifyReply): Promise<ChatCompletion | undefined> {
  const { info } = turn;
  const signal = clientGone(request, reply, context.shutdown);
  const result = await localGenerator(context.generation, info).run(generationOf(info, turn.body, signal));
  if (signal.aborted) return undefined;
  recordAttribution(context, request, turn.attribution, result.text);
  return {
    id: newId('chatcmpl-'),
    object: 'chat.completion',
    created: unixSeconds(),
    model: info.id,
    system_fingerprint: FINGERPRINT,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: result.toolCalls.length > 0 && !result.text ? null : result.text,
          ...(result.reasoning ? { reasoning_content: result.reasoning } : {}),
          ...(result.toolCalls.length > 0
            ? {
                tool_calls: result.toolCalls.map((call) => ({
                  id: call.id,
                  type: 'function' as const,
                  function: { name: call.name, arguments: call.arguments },
                })),
              }
            : {}),
          refusal: null,
        },
        finish_reason: finishOf(result),
        logprobs: null,
      },
    ],
    usage: usageOf(result),
  };
}

async function streamLocal(context: Context, turn: Turn, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { info, body } = turn;
  // Problems found before generation (bad tools schema, context overflow, full queue) must still
  // be plain HTTP errors, so the stream opens only once the first token is about to be sent.
  const controller = new AbortController();
  const signal = AbortSignal.any([controller.signal, clientGone(request, reply, context.shutdown)]);
  const includeUsage = body.stream_options?.include_usage === true;
  const base = { id: newId('chatcmpl-'), object: 'chat.completion.chunk' as const, created: unixSeconds(), model: info.id, system_fingerprint: FINGERPRINT };
  const chunk = (delta: ChatCompletionChunk['choices'][0]['delta'], finish: FinishReason | null = null): ChatCompletionChunk => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    ...(includeUsage ? { usage: null } : {}),
  });
  let stream: ReturnType<typeof openEventStream> | undefined;
  // A reply that starts with text opens with content "", one that is only tool calls with null, as OpenAI's do.
  const open = (content: '' | null) => {
    if (!stream) {
      stream = openEventStream(request, reply, signal);
      stream.data(chunk({ role: 'assistant', content }));
    }
    return stream;
  };
  const generation = generationOf(info, body, signal);
  generation.onText = (delta) => open('').data(chunk({ content: delta }));
  // The thought streams first, as reasoning_content deltas (what DeepSeek, llama-server and vLLM send; the AI SDK reads it as reasoning).
  generation.onReasoning = (delta) => open('').data(chunk({ reasoning_content: delta }));
  let result: GenerationResult;
  try {
    result = await localGenerator(context.generation, info).run(generation);
  } catch (error) {
    if (!stream) throw error;
    return streamFailed(stream, request, error);
  }
  const out = open(result.toolCalls.length > 0 && !result.text ? null : '');
  if (signal.aborted) return endCut(out, context.shutdown);
  recordAttribution(context, request, turn.attribution, result.text);
  result.toolCalls.forEach((call, index) =>
    out.data(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }] })),
  );
  out.data(chunk({}, finishOf(result)));
  if (includeUsage) out.data({ ...base, choices: [], usage: usageOf(result) });
  out.raw('data: [DONE]\n\n');
  out.end();
}

function finishOf(result: GenerationResult): FinishReason {
  return result.finishReason === 'cancelled' ? 'stop' : result.finishReason;
}

function usageOf(result: GenerationResult): Usage {
  return {
    prompt_tokens: result.promptTokens,
    completion_tokens: result.completionTokens,
    total_tokens: result.promptTokens + result.completionTokens,
    prompt_tokens_details: { cached_tokens: result.cachedTokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: result.reasoningTokens ?? 0 },
  };
}
