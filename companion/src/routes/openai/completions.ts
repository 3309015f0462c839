import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Completion, CompletionRequest } from '#shared/api/openai.js';
import { HearthError } from '../../errors.js';
import { resolveGenerator, type Generator } from '../../generation/generate.js';
import { clientGone } from '../../http/sse.js';
import { newId, unixSeconds } from '../../ids.js';
import type { GenerationRequest, GenerationResult } from '../../inference/types.js';
import type { OpenaiContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { nonEmptyString, type BodySchema } from '../schema.js';
import { stopList } from './convert.js';
import { forwardToProvider } from './forward.js';
import { streamGeneration } from './text-stream.js';
import { samplingOf, samplingSchema } from './sampling.js';

/** OpenAI's default for max_tokens on this route. */
export const COMPLETION_MAX_TOKENS = 16;

/** POST /v1/completions: types are checked here, what Hearth does not support in `refuseUnsupported`. */
export const completionBody = {
  type: 'object',
  required: ['model', 'prompt'],
  properties: {
    model: nonEmptyString(),
    prompt: { anyOf: [{ type: 'string' }, { type: 'array', items: {} }] },
    suffix: { type: ['string', 'null'] },
    max_tokens: { type: ['integer', 'null'], minimum: 1 },
    ...samplingSchema,
    stream: { type: ['boolean', 'null'] },
    stream_options: { type: ['object', 'null'], properties: { include_usage: { type: 'boolean' } } },
    n: { type: ['integer', 'null'], minimum: 1 },
    echo: { type: ['boolean', 'null'] },
    logprobs: { type: ['integer', 'null'], minimum: 0 },
    best_of: { type: ['integer', 'null'], minimum: 1 },
    user: { type: 'string', maxLength: 256 },
  },
} as const satisfies BodySchema<CompletionRequest>;

const FINGERPRINT = 'hearth';

type Context = Pick<OpenaiContext, 'generation' | 'providers' | 'shutdown'>;

/**
 * POST /v1/completions: OpenAI's legacy completions, the prompt without the chat template; with
 * `suffix`, fill-in-the-middle with the model's FIM tokens. Provider models are forwarded.
 */
export const completionRoutes: RoutePlugin<OpenaiContext, keyof Context> = async (app, context) => {
  app.post<{ Body: CompletionRequest }>('/v1/completions', { schema: { body: completionBody } }, async (request, reply) => {
    const body = request.body;
    refuseUnsupported(body);
    const prompt = promptOf(body.prompt);
    const generator = await resolveGenerator(context.generation, body.model);
    if (!generator.local) {
      const forward = { path: '/completions' as const, modelId: generator.id, body: body as unknown as Record<string, unknown> };
      return forwardToProvider(context, forward, request, reply);
    }
    return body.stream ? streamLocal(context, generator, body, prompt, request, reply) : answerLocal(context, generator, body, prompt, request, reply);
  });
};

/** What OpenAI's route offers and Hearth does not: refused by name, never ignored. */
function refuseUnsupported(body: CompletionRequest): void {
  const refuse = (param: string, what: string) => {
    throw new HearthError('invalid_request_error', `${what} Leave ${param} out.`, { param });
  };
  if ((body.n ?? 1) > 1) refuse('n', 'n greater than 1 is not supported: Hearth makes one completion per request; send the request again for another.');
  if ((body.best_of ?? 1) > 1) refuse('best_of', 'best_of greater than 1 is not supported: Hearth makes one completion per request.');
  if (body.echo) refuse('echo', 'echo is not supported: the answer holds only the completion; prepend the prompt yourself.');
  if (body.logprobs !== undefined && body.logprobs !== null) refuse('logprobs', 'logprobs is not supported by Hearth.');
}

/** One prompt: a string, or an array of one string (token arrays and batches are not supported). */
function promptOf(prompt: string | unknown[]): string {
  if (typeof prompt === 'string') return prompt;
  if (prompt.length === 1 && typeof prompt[0] === 'string') return prompt[0];
  throw new HearthError(
    'invalid_request_error',
    prompt.length > 1
      ? `prompt holds ${prompt.length} prompts; Hearth completes one per request: send them one by one.`
      : 'prompt must be a string, or an array of one string (token arrays are not supported).',
    { param: 'prompt' },
  );
}

function generationOf(generator: Generator, body: CompletionRequest, prompt: string, signal: AbortSignal): GenerationRequest {
  return {
    model: generator.id,
    history: [],
    raw: { prompt, ...(body.suffix !== undefined && body.suffix !== null ? { suffix: body.suffix } : {}) },
    maxTokens: body.max_tokens ?? COMPLETION_MAX_TOKENS,
    sampling: samplingOf(body),
    stop: stopList(body.stop),
    tools: [],
    toolMode: { type: 'none' },
    output: { type: 'text' },
    signal,
  };
}

function frame(generator: Generator): Omit<Completion, 'choices' | 'usage'> {
  return { id: newId('cmpl-'), object: 'text_completion', created: unixSeconds(), model: generator.id, system_fingerprint: FINGERPRINT };
}

const finishOf = (result: GenerationResult) => (result.finishReason === 'length' ? 'length' : 'stop');

const usageOf = (result: GenerationResult) => ({
  prompt_tokens: result.promptTokens,
  completion_tokens: result.completionTokens,
  total_tokens: result.promptTokens + result.completionTokens,
});

async function answerLocal(
  context: Context,
  generator: Generator,
  body: CompletionRequest,
  prompt: string,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<Completion | undefined> {
  const signal = clientGone(request, reply, context.shutdown);
  const result = await generator.run(generationOf(generator, body, prompt, signal));
  if (signal.aborted) return undefined;
  return { ...frame(generator), choices: [{ text: result.text, index: 0, logprobs: null, finish_reason: finishOf(result) }], usage: usageOf(result) };
}

function streamLocal(context: Context, generator: Generator, body: CompletionRequest, prompt: string, request: FastifyRequest, reply: FastifyReply) {
  const base = frame(generator);
  const includeUsage = body.stream_options?.include_usage === true;
  const chunk = (text: string, finish: 'stop' | 'length' | null = null): Completion => ({
    ...base,
    choices: [{ text, index: 0, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  return streamGeneration(context.shutdown, request, reply, (signal, onText) => generator.run({ ...generationOf(generator, body, prompt, signal), onText }), {
    piece: (delta) => chunk(delta),
    end: (result) => [chunk('', finishOf(result)), ...(includeUsage ? [{ ...base, choices: [], usage: usageOf(result) }] : [])],
    tail: 'data: [DONE]\n\n',
  });
}
