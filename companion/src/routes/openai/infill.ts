import type { InfillAnswer, InfillRequest } from '#shared/api/infill.js';
import { HearthError } from '../../errors.js';
import { resolveGenerator, type Generator } from '../../generation/generate.js';
import { clientGone } from '../../http/sse.js';
import type { GenerationRequest, GenerationResult } from '../../inference/types.js';
import type { OpenaiContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { nonEmptyString, type BodySchema } from '../schema.js';
import { streamGeneration } from './text-stream.js';

/** POST /infill, as llama.cpp's server takes it. */
export const infillBody = {
  type: 'object',
  properties: {
    model: nonEmptyString(),
    input_prefix: { type: 'string' },
    input_suffix: { type: 'string' },
    input_extra: {
      type: 'array',
      items: { type: 'object', required: ['text'], properties: { filename: { type: 'string' }, text: { type: 'string' } } },
    },
    prompt: { type: 'string' },
    n_predict: { anyOf: [{ const: -1 }, { type: 'integer', minimum: 1 }] },
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    top_k: { type: 'integer', minimum: 0 },
    seed: { type: 'integer' },
    stop: { type: 'array', items: nonEmptyString() },
    stream: { type: 'boolean' },
    cache_prompt: { type: 'boolean' },
  },
} as const satisfies BodySchema<InfillRequest>;

type Context = Pick<OpenaiContext, 'catalog' | 'generation' | 'shutdown'>;

/**
 * POST /infill: llama.cpp's fill-in-the-middle route for editors (llama.vscode, Tabby's llama.cpp
 * backend) on a local model with FIM tokens; the answer and its stream are llama.cpp's
 * (`{content, stop, ...}`; streamed `data:` lines, the last with `stop: true`).
 */
export const infillRoutes: RoutePlugin<OpenaiContext, keyof Context> = async (app, context) => {
  app.post<{ Body: InfillRequest }>('/infill', { schema: { body: infillBody } }, async (request, reply) => {
    const body = request.body;
    const generator = await resolveGenerator(context.generation, body.model ?? (await onlyFimModel(context)));
    if (!generator.local)
      throw new HearthError('invalid_request_error', `${generator.id} is a provider's model: /infill runs local models with fill-in-the-middle tokens.`, {
        param: 'model',
      });
    if (!body.stream) {
      const signal = clientGone(request, reply, context.shutdown);
      const result = await generator.run(generationOf(generator, body, signal));
      return signal.aborted ? undefined : final(generator, result, result.text);
    }
    return streamGeneration(context.shutdown, request, reply, (signal, onText) => generator.run({ ...generationOf(generator, body, signal), onText }), {
      piece: (delta): InfillAnswer => ({ content: delta, stop: false }),
      end: (result) => [final(generator, result, '')],
    });
  });
};

/** A request without `model` (llama-server has one): the one local model with FIM tokens, or a 400 that names them. */
async function onlyFimModel(context: Context): Promise<string> {
  const models = (await context.catalog.list()).filter((model) => model.source === 'local' && model.capabilities?.includes('fim'));
  if (models.length === 1) return models[0]!.id;
  throw new HearthError(
    'invalid_request_error',
    models.length === 0
      ? 'No local model has fill-in-the-middle tokens. Add a code model that has them (e.g. Qwen2.5-Coder), then name it in model.'
      : `Several local models can fill in the middle (${models.map((model) => model.id).join(', ')}): name one in model.`,
    { param: 'model' },
  );
}

function generationOf(generator: Generator, body: InfillRequest, signal: AbortSignal): GenerationRequest {
  return {
    model: generator.id,
    history: [],
    // llama.cpp appends `prompt` to the prefix; a file without a name is "tmp", as there.
    raw: {
      prompt: (body.input_prefix ?? '') + (body.prompt ?? ''),
      suffix: body.input_suffix ?? '',
      extra: (body.input_extra ?? []).map((file) => ({ name: file.filename ?? 'tmp', text: file.text })),
    },
    maxTokens: body.n_predict === undefined || body.n_predict < 0 ? undefined : body.n_predict,
    sampling: { temperature: body.temperature, topP: body.top_p, topK: body.top_k, seed: body.seed },
    stop: body.stop ?? [],
    tools: [],
    toolMode: { type: 'none' },
    output: { type: 'text' },
    signal,
  };
}

function final(generator: Generator, result: GenerationResult, content: string): InfillAnswer {
  return {
    content,
    stop: true,
    model: generator.id,
    tokens_predicted: result.completionTokens,
    tokens_evaluated: result.promptTokens,
    stop_type: result.finishReason === 'length' ? 'limit' : 'eos',
    truncated: false,
  };
}
