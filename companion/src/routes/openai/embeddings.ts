import type { FastifyInstance } from 'fastify';
import { HearthError } from '../../errors.js';
import { clientGone } from '../../http/sse.js';
import type { EmbeddingBatch } from '../../inference/embeddings.js';
import type { RouteOptions } from '../plugin.js';
import type { Embedding, EmbeddingList, EmbeddingRequest } from '#shared/api/openai.js';
import { embeddingBody } from './embeddings-schema.js';
import { forwardToProvider } from './forward.js';

/** POST /v1/embeddings: local embedding models through the engine, provider models forwarded as they are. */
export async function embeddingRoutes(app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.post<{ Body: EmbeddingRequest }>('/v1/embeddings', { schema: { body: embeddingBody } }, async (request, reply) => {
    const body = request.body;
    const target = await services.catalog.resolve(body.model);
    if (target.kind === 'provider') return forwardToProvider(services, '/embeddings', target.id, body as unknown as Record<string, unknown>, request, reply);
    const texts = textsOf(body.input);
    const signal = clientGone(request, reply, services.shutdown);
    const batch = await services.embeddings.embed(target.info, texts, { signal, dimensions: body.dimensions });
    return listOf(target.info.id, batch, body.encoding_format ?? 'float');
  });
}

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
