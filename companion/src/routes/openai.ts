import { chatRoutes } from './openai/chat.js';
import { embeddingRoutes } from './openai/embeddings.js';
import { inputItemRoutes } from './openai/input-items.js';
import { modelFileRoutes } from './openai/model-file.js';
import { modelRoutes } from './openai/models.js';
import { responsesRoutes } from './openai/responses.js';
import type { OpenaiContext } from './contexts.js';
import { registerParts, type RoutePlugin } from './plugin.js';

/** The OpenAI-compatible family: /v1/models (and each model's file), /v1/chat/completions, /v1/responses, /v1/embeddings. */
export const openaiRoutes: RoutePlugin<OpenaiContext> = async (app, context) => {
  await registerParts(app, context, [modelRoutes, modelFileRoutes, chatRoutes, responsesRoutes, inputItemRoutes, embeddingRoutes]);
};
