import { createReadStream } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { ImageCancelRequest, ImageJob, ImageJobList, ImageModelList } from '#shared/api/images.js';
import type { RouteOptions } from '../plugin.js';
import { viewerOf } from './viewer.js';

const STATUSES = ['queued', 'preparing', 'generating', 'completed', 'failed', 'cancelled'] as const;

/** Models, jobs and the gallery, cancel, and the stored result files. */
export async function imageJobRoutes(app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.get('/v1/images/models', async (): Promise<ImageModelList> => ({ object: 'list', data: services.images.models() }));

  app.get<{ Querystring: { limit?: string; status?: ImageJob['status'] } }>(
    '/v1/images/jobs',
    {
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { limit: { type: 'string', pattern: '^([1-9][0-9]?|[1-4][0-9]{2}|500)$' }, status: { enum: STATUSES } },
        },
      },
    },
    async (request): Promise<ImageJobList> => ({
      object: 'list',
      data: services.images.gallery(Number(request.query.limit ?? 50), request.query.status, viewerOf(request)),
    }),
  );

  app.get<{ Params: { id: string } }>('/v1/images/jobs/:id', async (request): Promise<ImageJob> => services.images.job(request.params.id, viewerOf(request)));

  app.delete<{ Params: { id: string } }>('/v1/images/jobs/:id', async (request) => {
    services.images.remove(request.params.id, viewerOf(request));
    return { id: request.params.id, object: 'image.job.deleted', deleted: true };
  });

  app.post<{ Body: ImageCancelRequest }>(
    '/v1/images/cancel',
    { schema: { body: { type: 'object', required: ['job_id'], additionalProperties: false, properties: { job_id: { type: 'string', minLength: 1 } } } } },
    async (request): Promise<ImageJob> => services.images.cancel(request.body.job_id, viewerOf(request)),
  );

  app.get<{ Params: { job: string; name: string } }>('/v1/images/files/:job/:name', async (request, reply) => {
    const path = services.images.resultFile(request.params.job, request.params.name, viewerOf(request));
    return reply.header('content-type', 'image/png').header('cache-control', 'private, max-age=31536000, immutable').send(createReadStream(path));
  });
}
