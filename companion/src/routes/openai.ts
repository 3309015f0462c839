import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { chatRoutes } from './openai/chat.js';
import { modelRoutes } from './openai/models.js';
import { responsesRoutes } from './openai/responses.js';

/** The OpenAI-compatible family: /v1/models, /v1/chat/completions, /v1/responses. */
export async function openaiRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  modelRoutes(app, options.services);
  chatRoutes(app, options.services);
  responsesRoutes(app, options.services);
}
