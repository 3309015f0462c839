import { memoryBrowseRoutes } from './memory/browse.js';
import { memoryCoreRoutes } from './memory/core.js';
import { memoryIndexRoutes } from './memory/index-operations.js';
import type { MemoryContext } from './contexts.js';
import { defaultBodyLimit, registerParts, type RoutePlugin } from './plugin.js';

/** The /memory family: ingestion and recall, browsing and editing, and loopback-only index operations. */
export const memoryRoutes: RoutePlugin<MemoryContext> = async (app, context) => {
  // Every memory route takes bodies up to server.limits.memory_body_mb, not the inference limit.
  defaultBodyLimit(app, context.config().server.limits.memory_body_mb * 1024 * 1024);
  await registerParts(app, context, [memoryCoreRoutes, memoryBrowseRoutes, memoryIndexRoutes]);
};
