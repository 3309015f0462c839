import type { OpenaiContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import type { ModelList, ModelRecord } from '#shared/api/openai.js';

const capability = { type: 'string' };
export const modelRecord = {
  type: 'object',
  required: ['id', 'object', 'created', 'owned_by'],
  properties: {
    id: { type: 'string' },
    object: { type: 'string' },
    created: { type: 'integer' },
    owned_by: { type: 'string' },
    source: { type: 'string' },
    loaded: { type: 'boolean' },
    size_bytes: { type: ['integer', 'null'] },
    context_length: { type: ['integer', 'null'] },
    context_window: { type: ['integer', 'null'] },
    quantization: { type: ['string', 'null'] },
    capabilities: { type: 'array', items: capability },
    error: { type: 'string' },
  },
} as const;

/** Declared so Fastify serializes the list with a compiled serializer: clients poll this route. */
export const modelList = {
  200: { type: 'object', required: ['object', 'data'], properties: { object: { type: 'string' }, data: { type: 'array', items: modelRecord } } },
} as const;

export const modelRoutes: RoutePlugin<OpenaiContext, 'catalog'> = async (app, { catalog }) => {
  app.get('/v1/models', { schema: { response: modelList } }, async (): Promise<ModelList> => ({ object: 'list', data: await catalog.list() }));

  app.get<{ Params: { '*': string } }>('/v1/models/*', async (request): Promise<ModelRecord> => {
    const id = request.params['*'];
    const target = await catalog.resolve(id);
    if (target.kind === 'local') return catalog.localRecord(target.info);
    return { id, object: 'model', created: 0, owned_by: id.split('/')[0]!, source: 'provider' };
  });
};
