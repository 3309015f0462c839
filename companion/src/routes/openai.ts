import type { FastifyInstance } from 'fastify';
import { chatRoutes } from './openai/chat.js';
import { embeddingRoutes } from './openai/embeddings.js';
import { inputItemRoutes } from './openai/input-items.js';
import { modelFileRoutes } from './openai/model-file.js';
import { modelRoutes } from './openai/models.js';
import { responsesRoutes } from './openai/responses.js';
import type { RouteOptions } from './plugin.js';

/** The OpenAI-compatible family: /v1/models (and each model's file), /v1/chat/completions, /v1/responses, /v1/embeddings. */
export async function openaiRoutes(app: FastifyInstance, options: RouteOptions): Promise<void> {
  await app.register(modelRoutes, options);
  await app.register(modelFileRoutes, options);
  await app.register(chatRoutes, options);
  await app.register(responsesRoutes, options);
  await app.register(inputItemRoutes, options);
  await app.register(embeddingRoutes, options);
}
