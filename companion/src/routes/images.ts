import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import { imageJobRoutes } from './images/jobs.js';
import { imageOperationRoutes } from './images/operations.js';
import type { RouteOptions } from './plugin.js';

/** The /v1/images family: models, generation, edits and upscaling as jobs, the gallery. */
export async function imageRoutes(app: FastifyInstance, options: RouteOptions): Promise<void> {
  // Multipart bodies (edits, upscale) are accepted in this family only.
  await app.register(multipart, { throwFileSizeLimit: true });
  await app.register(imageOperationRoutes, options);
  await app.register(imageJobRoutes, options);
}
