import { createReadStream, statSync } from 'node:fs';
import type { MediaJob, MediaJobList, MediaJobRequest, MediaProviderList, MediaQuote, MediaQuoteRequest } from '#shared/api/media.js';
import { ownerOf, viewerOf } from './images/viewer.js';
import type { MediaContext } from './contexts.js';
import type { RoutePlugin } from './plugin.js';
import { nonEmptyString, type BodySchema } from './schema.js';

export const quoteBody = {
  type: 'object',
  required: ['provider', 'operation', 'prompt', 'seconds', 'size'],
  additionalProperties: false,
  properties: {
    provider: nonEmptyString(),
    model: nonEmptyString(),
    operation: { enum: ['video.generate', 'video.from_image'] },
    prompt: nonEmptyString(),
    seconds: { type: 'integer', minimum: 1, maximum: 600 },
    size: { type: 'string', pattern: '^[1-9][0-9]{1,4}x[1-9][0-9]{1,4}$' },
    input_image: { type: 'string', maxLength: 48 * 1024 * 1024 },
  },
} as const satisfies BodySchema<MediaQuoteRequest>;

export const jobBody = {
  type: 'object',
  required: ['quote_id', 'confirm'],
  additionalProperties: false,
  properties: { quote_id: nonEmptyString(), confirm: { type: 'boolean' } },
} as const satisfies BodySchema<MediaJobRequest>;

export const jobsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'string', pattern: '^([1-9][0-9]?|100)$' } },
} as const;

/** The /v1/media family: hosted (paid) video by quote and confirmation. */
export const mediaRoutes: RoutePlugin<MediaContext, 'config' | 'media'> = async (app, { config, media }) => {
  const bodyLimit = config().server.limits.images_body_mb * 1024 * 1024;

  app.get('/v1/media/providers', async (): Promise<MediaProviderList> => media.providers());

  app.post<{ Body: MediaQuoteRequest }>('/v1/media/quotes', { bodyLimit, schema: { body: quoteBody } }, async (request): Promise<MediaQuote> =>
    media.quote(request.body, ownerOf(request)),
  );

  app.post<{ Body: MediaJobRequest }>('/v1/media/jobs', { schema: { body: jobBody } }, async (request): Promise<MediaJob> =>
    media.confirm(request.body, viewerOf(request)),
  );

  app.get<{ Querystring: { limit?: string } }>('/v1/media/jobs', { schema: { querystring: jobsQuery } }, async (request): Promise<MediaJobList> => ({
    object: 'list',
    data: media.jobs(Number(request.query.limit ?? 20), viewerOf(request)),
  }));

  app.get<{ Params: { id: string } }>('/v1/media/jobs/:id', async (request): Promise<MediaJob> => media.job(request.params.id, viewerOf(request)));

  app.get<{ Params: { id: string } }>('/v1/media/jobs/:id/content', async (request, reply) => {
    const path = media.contentPath(request.params.id, viewerOf(request));
    return reply
      .header('content-type', 'video/mp4')
      .header('content-length', String(statSync(path).size))
      .send(createReadStream(path));
  });
};
