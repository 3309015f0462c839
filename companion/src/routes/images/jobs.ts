import { createReadStream } from 'node:fs';
import type { ImageCancelRequest, ImageJob, ImageJobList, ImageModelList } from '#shared/api/images.js';
import type { ImagesContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { nonEmptyString, requiredBody, type BodySchema } from '../schema.js';
import { viewerOf } from './viewer.js';

const STATUSES = ['queued', 'preparing', 'generating', 'completed', 'failed', 'cancelled'] as const;

export const galleryQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'string', pattern: '^([1-9][0-9]?|[1-4][0-9]{2}|500)$' }, status: { enum: STATUSES } },
} as const;

export const cancelBody = requiredBody({ job_id: nonEmptyString() }) satisfies BodySchema<ImageCancelRequest>;

/** Models, jobs and the gallery, cancel, and the stored result files. */
export const imageJobRoutes: RoutePlugin<ImagesContext, 'images'> = async (app, { images }) => {
  app.get('/v1/images/models', async (): Promise<ImageModelList> => ({ object: 'list', data: images.models() }));

  app.get<{ Querystring: { limit?: string; status?: ImageJob['status'] } }>(
    '/v1/images/jobs',
    { schema: { querystring: galleryQuery } },
    async (request): Promise<ImageJobList> => ({
      object: 'list',
      data: images.gallery(Number(request.query.limit ?? 50), request.query.status, viewerOf(request)),
    }),
  );

  app.get<{ Params: { id: string } }>('/v1/images/jobs/:id', async (request): Promise<ImageJob> => images.job(request.params.id, viewerOf(request)));

  app.delete<{ Params: { id: string } }>('/v1/images/jobs/:id', async (request) => {
    images.remove(request.params.id, viewerOf(request));
    return { id: request.params.id, object: 'image.job.deleted', deleted: true };
  });

  app.post<{ Body: ImageCancelRequest }>('/v1/images/cancel', { schema: { body: cancelBody } }, async (request): Promise<ImageJob> =>
    images.cancel(request.body.job_id, viewerOf(request)),
  );

  app.get<{ Params: { job: string; name: string } }>('/v1/images/files/:job/:name', async (request, reply) => {
    const path = images.resultFile(request.params.job, request.params.name, viewerOf(request));
    return reply.header('content-type', 'image/png').header('cache-control', 'private, max-age=31536000, immutable').send(createReadStream(path));
  });
};
