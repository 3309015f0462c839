import type { FastifyInstance } from 'fastify';
import { memoryBrowseRoutes } from './memory/browse.js';
import { memoryCoreRoutes } from './memory/core.js';
import { memoryIndexRoutes } from './memory/index-operations.js';
import type { RouteOptions } from './plugin.js';

/** The /memory family: ingestion and recall, browsing and editing, and loopback-only index operations. */
export async function memoryRoutes(app: FastifyInstance, options: RouteOptions): Promise<void> {
  await app.register(memoryCoreRoutes, options);
  await app.register(memoryBrowseRoutes, options);
  await app.register(memoryIndexRoutes, options);
}
