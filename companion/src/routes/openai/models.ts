import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import type { ModelList, ModelRecord } from '../../../../shared/src/api/openai.js';

export function modelRoutes(app: FastifyInstance, services: Services): void {
  app.get('/v1/models', async (): Promise<ModelList> => ({ object: 'list', data: await services.catalog.list() }));

  app.get<{ Params: { '*': string } }>('/v1/models/*', async (request): Promise<ModelRecord> => {
    const id = request.params['*'];
    const target = await services.catalog.resolve(id);
    if (target.kind === 'local') return services.catalog.localRecord(target.info);
    return { id, object: 'model', created: 0, owned_by: id.split('/')[0]!, source: 'remote' };
  });
}
