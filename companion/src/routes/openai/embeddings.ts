import { HearthError } from '../../errors.js';
import { clientGone } from '../../http/sse.js';
import type { EmbeddingBatch } from '../../inference/embeddings.js';
import type { OpenaiContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { nonEmptyString, type BodySchema } from '../schema.js';
import type { Embedding, EmbeddingList, EmbeddingRequest } from '#shared/api/openai.js';
import { forwardToProvider } from './forward.js';

/** OpenAI's limit on inputs per request. */
const MAX_INPUTS = 2048;

/** POST /v1/embeddings: types are checked here, meaning below. */
export const embeddingBody = {
  type: 'object',
  required: ['model', 'input'],
  properties: {
    model: nonEmptyString(),
    input: {
      anyOf: [
        { type: 'string' },
        { type: 'array', minItems: 1, maxItems: MAX_INPUTS, items: { type: 'string' } },
        // Token arrays pass the type check so that the route can say why they are refused.
        { type: 'array', minItems: 1, items: { type: 'integer' } },
        { type: 'array', minItems: 1, items: { type: 'array', items: { type: 'integer' } } },
      ],
    },
    encoding_format: { enum: ['float', 'base64'] },
    dimensions: { type: 'integer', minimum: 1 },
    // As on chat completions: it ties requests to a conversation (a provider pool's affinity).
    user: { type: 'string', maxLength: 256 },
  },
} as const satisfies BodySchema<EmbeddingRequest>;

/** POST /v1/embeddings: local embedding models through the engine, provider models forwarded as they are. */
export const embeddingRoutes: RoutePlugin<OpenaiContext, 'catalog' | 'embeddings' | 'providers' | 'shutdown'> = async (app, context) => {
  app.post<{ Body: EmbeddingRequest }>('/v1/embeddings', { schema: { body: embeddingBody } }, async (request, reply) => {
    const body = request.body;
    const target = await context.catalog.resolve(body.model);
    if (target.kind === 'provider')
      return forwardToProvider(context, { path: '/embeddings', modelId: target.id, body: body as unknown as Record<string, unknown> }, request, reply);
    const texts = textsOf(body.input);
    const signal = clientGone(request, reply, context.shutdown);
    const batch = await context.embeddings.embed(target.info, texts, { signal, dimensions: body.dimensions });
    return listOf(target.info.id, batch, body.encoding_format ?? 'float');
  });
};

function textsOf(input: EmbeddingRequest['input']): string[] {
  if (typeof input === 'string') return [input];
  if (input.every((item) => typeof item === 'string')) return input as string[];
  throw new HearthError(
    'invalid_request_error',
    "input as token arrays is not supported: token ids belong to one model's tokenizer. Send the text (a string or an array of strings).",
    { param: 'input' },
  );
}

function listOf(model: string, batch: EmbeddingBatch, format: 'float' | 'base64'): EmbeddingList {
  const data = batch.vectors.map((vector, index): Embedding => ({
    object: 'embedding',
    index,
    embedding: format === 'base64' ? Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64') : Array.from(vector),
  }));
  return { object: 'list', data, model, usage: { prompt_tokens: batch.promptTokens, total_tokens: batch.promptTokens } };
}
