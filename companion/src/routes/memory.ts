import type { FastifyInstance } from 'fastify';
import { memoryBrowseRoutes } from './memory/browse.js';
import { memoryCoreRoutes } from './memory/core.js';
import { memoryIndexRoutes } from './memory/index-operations.js';
import type { RouteOptions } from './plugin.js';

/** The /memory family: ingestion and recall, browsing and editing, and loopback-only index operations. */
export async function memoryRoutes(app: FastifyInstance, options: RouteOptions): Promise<void> {
  // Every memory route takes bodies up to server.limits.memory_body_mb, not the inference limit.
  const bodyLimit = options.services.config.server.limits.memory_body_mb * 1024 * 1024;
  app.addHook('onRoute', (route) => void (route.bodyLimit ??= bodyLimit));
  await app.register(memoryCoreRoutes, options);
  await app.register(memoryBrowseRoutes, options);
  await app.register(memoryIndexRoutes, options);
}
