import multipart from '@fastify/multipart';
import { imageJobRoutes } from './images/jobs.js';
import { imageOperationRoutes } from './images/operations.js';
import type { ImagesContext } from './contexts.js';
import { registerParts, type RoutePlugin } from './plugin.js';

/** The /v1/images family: models, generation, edits and upscaling as jobs, the gallery. */
export const imageRoutes: RoutePlugin<ImagesContext> = async (app, context) => {
  // Multipart bodies (edits, upscale) are accepted in this family only.
  await app.register(multipart, { throwFileSizeLimit: true });
  await registerParts(app, context, [imageOperationRoutes, imageJobRoutes]);
};
