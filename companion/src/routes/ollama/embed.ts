import type { OllamaEmbedRequest, OllamaEmbedResponse, OllamaEmbeddingsRequest, OllamaEmbeddingsResponse } from '#shared/api/ollama.js';
import { HearthError } from '../../errors.js';
import { clientGone } from '../../http/sse.js';
import type { OllamaContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { nonEmptyString, type BodySchema } from '../schema.js';
import { keepAliveOf } from './keep-alive.js';
import { resolveName } from './names.js';
import { keepAliveSchema, optionsSchema } from './schemas.js';

export const ollamaEmbedBody = {
  type: 'object',
  required: ['model', 'input'],
  properties: {
    model: nonEmptyString(),
    input: { anyOf: [{ type: 'string' }, { type: 'array', minItems: 1, maxItems: 2048, items: { type: 'string' } }] },
    truncate: { type: 'boolean' },
    dimensions: { type: 'integer', minimum: 1 },
    keep_alive: keepAliveSchema,
    options: optionsSchema,
  },
} as const satisfies BodySchema<OllamaEmbedRequest>;

export const ollamaEmbeddingsBody = {
  type: 'object',
  required: ['model', 'prompt'],
  properties: {
    model: nonEmptyString(),
    prompt: { type: 'string' },
    keep_alive: keepAliveSchema,
    options: optionsSchema,
  },
} as const satisfies BodySchema<OllamaEmbeddingsRequest>;

type Used = 'catalog' | 'downloads' | 'embeddings' | 'shutdown';

/**
 * POST /api/embed (texts to vectors) and the older POST /api/embeddings (one prompt, one vector),
 * on local embedding models through the embedding engine, as POST /v1/embeddings runs them.
 */
export const embedRoutes: RoutePlugin<OllamaContext, Used> = async (app, context) => {
  app.post<{ Body: OllamaEmbedRequest }>('/api/embed', { schema: { body: ollamaEmbedBody } }, async (request, reply): Promise<OllamaEmbedResponse> => {
    const body = request.body;
    keepAliveOf(body.keep_alive);
    const started = process.hrtime.bigint();
    const texts = typeof body.input === 'string' ? [body.input] : body.input;
    const info = await embeddingModel(context, body.model);
    const batch = await context.embeddings.embed(info, texts, { signal: clientGone(request, reply, context.shutdown), dimensions: body.dimensions });
    return {
      model: body.model,
      embeddings: batch.vectors.map((vector) => Array.from(vector)),
      total_duration: Number(process.hrtime.bigint() - started),
      load_duration: 0,
      prompt_eval_count: batch.promptTokens,
    };
  });

  app.post<{ Body: OllamaEmbeddingsRequest }>(
    '/api/embeddings',
    { schema: { body: ollamaEmbeddingsBody } },
    async (request, reply): Promise<OllamaEmbeddingsResponse> => {
      const body = request.body;
      keepAliveOf(body.keep_alive);
      const info = await embeddingModel(context, body.model);
      const batch = await context.embeddings.embed(info, [body.prompt], { signal: clientGone(request, reply, context.shutdown) });
      return { embedding: Array.from(batch.vectors[0] ?? []) };
    },
  );
};

async function embeddingModel(context: Pick<OllamaContext, 'catalog' | 'downloads'>, name: string) {
  const target = await resolveName(context, name);
  if (target.kind === 'provider')
    throw new HearthError(
      'invalid_request_error',
      `${name} is a provider's model: Hearth's Ollama API embeds with local models only. Use POST /v1/embeddings, which forwards to the provider.`,
      { param: 'model' },
    );
  return target.info;
}
