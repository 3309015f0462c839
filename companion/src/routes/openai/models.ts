import type { FastifyInstance } from 'fastify';
import type { RouteOptions } from '../plugin.js';
import type { ModelList, ModelRecord } from '#shared/api/openai.js';

const capability = { type: 'string' };
const modelRecord = {
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
const modelList = {
  200: { type: 'object', required: ['object', 'data'], properties: { object: { type: 'string' }, data: { type: 'array', items: modelRecord } } },
} as const;

export async function modelRoutes(app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.get('/v1/models', { schema: { response: modelList } }, async (): Promise<ModelList> => ({ object: 'list', data: await services.catalog.list() }));

  app.get<{ Params: { '*': string } }>('/v1/models/*', async (request): Promise<ModelRecord> => {
    const id = request.params['*'];
    const target = await services.catalog.resolve(id);
    if (target.kind === 'local') return services.catalog.localRecord(target.info);
    return { id, object: 'model', created: 0, owned_by: id.split('/')[0]!, source: 'provider' };
  });
}
