import { HearthError } from '../errors.js';
import { installErrorHandling } from '../http/error-handler.js';
import type { OllamaContext } from './contexts.js';
import { chatRoutes } from './ollama/chat.js';
import { embedRoutes } from './ollama/embed.js';
import { generateRoutes } from './ollama/generate.js';
import { modelRoutes } from './ollama/models.js';
import { pullRoutes } from './ollama/pull.js';
import { ollamaError } from './ollama/errors.js';
import { registerParts, type RoutePlugin } from './plugin.js';

/**
 * Ollama's API under /api: the model list, chat, generate, embeddings and pull, for apps that
 * have only an "Ollama" provider. Its errors are Ollama's `{"error": "message"}`.
 */
export const ollamaRoutes: RoutePlugin<OllamaContext> = async (app, context) => {
  installErrorHandling(app, ollamaError);
  await registerParts(app, context, [modelRoutes, chatRoutes, generateRoutes, embedRoutes, pullRoutes]);
  // A path under /api that is none of the above: the same error shape, with the routes there are.
  await app.register(
    async (api) =>
      api.setNotFoundHandler(async (request) => {
        throw new HearthError(
          'route_not_found',
          `No route for ${request.method} ${request.url.split('?')[0]}. Hearth answers Ollama's /api/version, /api/tags, /api/show, /api/ps, /api/chat, /api/generate, /api/embed, /api/embeddings and /api/pull.`,
        );
      }),
    { prefix: '/api' },
  );
};
