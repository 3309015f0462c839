import type { OllamaModelList, OllamaRunningList, OllamaShowRequest, OllamaShowResponse, OllamaVersion } from '#shared/api/ollama.js';
import { HearthError } from '../../errors.js';
import type { OllamaContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import type { BodySchema } from '../schema.js';
import { detailsOf, ollamaCapabilities, ollamaModel, PROVIDER_CAPABILITIES } from './details.js';
import { resolveName } from './names.js';
import { modelOrName } from './schemas.js';

/**
 * The Ollama version GET /api/version reports: the Ollama API whose routes and fields Hearth
 * answers (clients compare it to decide what they may send, e.g. `think`, tools).
 */
export const OLLAMA_API_VERSION = '0.12.0';

/** A time far enough away to mean "never" (Ollama's own for keep_alive -1 is in year 2318). */
const NEVER = '2318-01-01T00:00:00.000Z';

export const showBody = {
  type: 'object',
  properties: {
    ...modelOrName,
    verbose: { type: 'boolean' },
  },
} as const satisfies BodySchema<OllamaShowRequest>;

type Used = 'catalog' | 'engine' | 'downloads' | 'config';

/** GET /api/version, GET /api/tags, POST /api/show, GET /api/ps. */
export const modelRoutes: RoutePlugin<OllamaContext, Used> = async (app, context) => {
  app.get('/api/version', async (): Promise<OllamaVersion> => ({ version: OLLAMA_API_VERSION }));

  app.get('/api/tags', async (): Promise<OllamaModelList> => {
    const records = await context.catalog.list();
    const local = new Map((await context.catalog.local()).map((model) => [model.id, model]));
    return { models: records.filter((record) => !record.error).map((record) => ollamaModel(record.id, local.get(record.id), record)) };
  });

  app.post<{ Body: OllamaShowRequest }>('/api/show', { schema: { body: showBody } }, async (request): Promise<OllamaShowResponse> => {
    const name = request.body.model ?? request.body.name;
    if (!name) throw new HearthError('invalid_request_error', 'model is required: send {"model": "<name>"} (GET /api/tags lists them).', { param: 'model' });
    const target = await resolveName(context, name);
    const local = target.kind === 'local' ? target.info : undefined;
    const architecture = local?.architecture ?? '';
    return {
      modelfile: '',
      parameters: '',
      template: '',
      details: detailsOf(local),
      model_info: {
        'general.architecture': architecture,
        ...(architecture && local?.contextLength ? { [`${architecture}.context_length`]: local.contextLength } : {}),
      },
      capabilities: ollamaCapabilities(local?.capabilities ?? PROVIDER_CAPABILITIES),
      modified_at: ollamaModel(name, local).modified_at,
    };
  });

  app.get('/api/ps', async (): Promise<OllamaRunningList> => {
    const local = new Map((await context.catalog.local()).map((model) => [model.id, model]));
    const idle = context.config().models.idle_unload_seconds;
    return {
      models: context.engine.status().map((status) => {
        const lastUsed = context.engine.loadedModel(status.id)?.lastUsed ?? Date.now();
        return {
          ...ollamaModel(status.id, local.get(status.id)),
          // What it takes loaded (weights and context), as Ollama's ps reports; the file's size until the engine says.
          ...(status.memoryBytes ? { size: status.memoryBytes } : {}),
          expires_at: idle > 0 ? new Date(lastUsed + idle * 1000).toISOString() : NEVER,
          size_vram: 0,
          context_length: status.contextSize,
        };
      }),
    };
  });
};
