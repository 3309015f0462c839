import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HearthError } from '../../errors.js';
import { newId, unixSeconds } from '../../ids.js';
import { clientGone, openEventStream } from '../../http/sse.js';
import type { LocalModel } from '../../models/registry.js';
import type { GenerationRequest, GenerationResult } from '../../inference/types.js';
import type { Services } from '../../services.js';
import type { RouteOptions } from '../plugin.js';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, FinishReason } from '#shared/api/openai.js';
import { chatCompletionBody } from './chat-schema.js';
import { messagesToHistory, outputOf, stopList, toolModeOf, toolsOf } from './convert.js';
import { attributionOf, lastUserText, recordAttribution, type Attribution } from './attribution.js';
import { forwardToProvider } from './forward.js';

const FINGERPRINT = 'hearth';

export async function chatRoutes(app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.post<{ Body: ChatCompletionRequest }>('/v1/chat/completions', { schema: { body: chatCompletionBody } }, async (request, reply) => {
    const body = request.body;
    if (body.logprobs) throw new HearthError('invalid_request_error', 'logprobs is not supported by Hearth.', { param: 'logprobs' });
    const attribution = attributionOf(services, request, reply, lastUserText(body.messages));
    const target = await services.catalog.resolve(body.model);
    if (target.kind === 'provider')
      return forwardToProvider(services, '/chat/completions', target.id, body as unknown as Record<string, unknown>, request, reply, (text) =>
        recordAttribution(services, request, attribution, text),
      );
    return body.stream
      ? streamLocal(services, target.info, body, request, reply, attribution)
      : answerLocal(services, target.info, body, request, reply, attribution);
  });
}

function generationOf(info: LocalModel, body: ChatCompletionRequest, signal: AbortSignal): GenerationRequest {
  const tools = toolsOf(body);
  return {
    model: info.id,
    history: messagesToHistory(body.messages),
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    sampling: {
      temperature: body.temperature ?? undefined,
      topP: body.top_p ?? undefined,
      seed: body.seed ?? undefined,
      presencePenalty: body.presence_penalty ?? undefined,
      frequencyPenalty: body.frequency_penalty ?? undefined,
    },
    stop: stopList(body.stop),
    tools,
    toolMode: toolModeOf(body.tool_choice, tools),
    output: outputOf(body.response_format),
    signal,
  };
}

async function answerLocal(
  services: Services,
  info: LocalModel,
  body: ChatCompletionRequest,
  request: FastifyRequest,
  reply: FastifyReply,
  attribution: Attribution | null,
): Promise<ChatCompletion | undefined> {
  const signal = clientGone(request, reply, services.shutdown);
  const result = await services.engine.run(info, generationOf(info, body, signal));
  if (signal.aborted) return undefined;
  recordAttribution(services, request, attribution, result.text);
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

async function streamLocal(
  services: Services,
  info: LocalModel,
  body: ChatCompletionRequest,
  request: FastifyRequest,
  reply: FastifyReply,
  attribution: Attribution | null,
): Promise<void> {
  // Problems found before generation (bad tools schema, context overflow, full queue) must still
  // be plain HTTP errors, so the stream opens only once the first token is about to be sent.
  const controller = new AbortController();
  const signal = AbortSignal.any([controller.signal, clientGone(request, reply, services.shutdown)]);
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
  let result: GenerationResult;
  try {
    result = await services.engine.run(info, generation);
  } catch (error) {
    if (!stream) throw error;
    stream.data(error instanceof HearthError ? error.toBody() : new HearthError('internal_error').toBody());
    stream.end();
    request.log.error({ err: error }, 'stream failed');
    return;
  }
  const out = open(result.toolCalls.length > 0 && !result.text ? null : '');
  if (signal.aborted) {
    // The client left (no one reads this) or the server is shutting down: then say so before ending.
    if (services.shutdown.aborted)
      out.data(new HearthError('server_busy', 'The server is shutting down; this reply was cut short.', { retryAfter: 5 }).toBody());
    return out.end();
  }
  recordAttribution(services, request, attribution, result.text);
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

function usageOf(result: GenerationResult) {
  return { prompt_tokens: result.promptTokens, completion_tokens: result.completionTokens, total_tokens: result.promptTokens + result.completionTokens };
}
