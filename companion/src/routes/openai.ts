import { chatRoutes } from './openai/chat.js';
import { completionRoutes } from './openai/completions.js';
import { embeddingRoutes } from './openai/embeddings.js';
import { infillRoutes } from './openai/infill.js';
import { inputItemRoutes } from './openai/input-items.js';
import { modelFileRoutes } from './openai/model-file.js';
import { modelRoutes } from './openai/models.js';
import { responsesRoutes } from './openai/responses.js';
import { transcriptionRoutes } from './openai/transcriptions.js';
import type { OpenaiContext } from './contexts.js';
import { registerParts, type RoutePlugin } from './plugin.js';

/** The OpenAI-compatible family: /v1/models (and each model's file), /v1/chat/completions, /v1/completions, /v1/responses, /v1/embeddings, /v1/audio/transcriptions; and llama.cpp's /infill. */
export const openaiRoutes: RoutePlugin<OpenaiContext> = async (app, context) => {
  await registerParts(app, context, [
    modelRoutes,
    modelFileRoutes,
    chatRoutes,
    completionRoutes,
    responsesRoutes,
    inputItemRoutes,
    embeddingRoutes,
    infillRoutes,
    transcriptionRoutes,
  ]);
};
