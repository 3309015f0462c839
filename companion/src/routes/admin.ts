import type { FastifyInstance } from 'fastify';
import { cloudRoutes } from './admin/cloud.js';
import { configRoutes } from './admin/config.js';
import { deviceRoutes } from './admin/devices.js';
import { remoteHostRoutes } from './admin/remote-hosts.js';
import { statusEventRoutes } from './admin/events.js';
import { keyRoutes } from './admin/keys.js';
import { mcpAdminRoutes } from './admin/mcp.js';
import { modelEstimateRoutes } from './admin/model-estimate.js';
import { modelLibraryRoutes } from './admin/model-library.js';
import { sessionRoutes } from './admin/session.js';
import { statusRoutes } from './admin/status.js';
import { toolAdminRoutes } from './admin/tools.js';
import type { RouteOptions } from './plugin.js';

/** The admin family: loopback only, with the admin credential (both enforced by the perimeter for every /admin path). */
export async function adminRoutes(app: FastifyInstance, options: RouteOptions): Promise<void> {
  // Every admin route takes bodies up to server.limits.admin_body_kb.
  const bodyLimit = options.services.config.server.limits.admin_body_kb * 1024;
  app.addHook('onRoute', (route) => void (route.bodyLimit ??= bodyLimit));
  await app.register(statusRoutes, options);
  await app.register(keyRoutes, options);
  await app.register(configRoutes, options);
  await app.register(mcpAdminRoutes, options);
  await app.register(deviceRoutes, options);
  await app.register(remoteHostRoutes, options);
  await app.register(cloudRoutes, options);
  await app.register(modelLibraryRoutes, options);
  await app.register(modelEstimateRoutes, options);
  await app.register(statusEventRoutes, options);
  await app.register(sessionRoutes, options);
  await app.register(toolAdminRoutes, options);
}
