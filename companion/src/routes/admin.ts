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
import type { AdminContext } from './contexts.js';
import type { RoutePlugin } from './plugin.js';

/** The admin family: loopback only, with the admin credential (both enforced by the perimeter for every /admin path). */
export const adminRoutes: RoutePlugin<AdminContext> = async (app, context) => {
  // Every admin route takes bodies up to server.limits.admin_body_kb.
  const bodyLimit = context.config().server.limits.admin_body_kb * 1024;
  app.addHook('onRoute', (route) => void (route.bodyLimit ??= bodyLimit));
  await app.register(statusRoutes, context);
  await app.register(keyRoutes, context);
  await app.register(configRoutes, context);
  await app.register(mcpAdminRoutes, context);
  await app.register(deviceRoutes, context);
  await app.register(remoteHostRoutes, context);
  await app.register(cloudRoutes, context);
  await app.register(modelLibraryRoutes, context);
  await app.register(modelEstimateRoutes, context);
  await app.register(statusEventRoutes, context);
  await app.register(sessionRoutes, context);
  await app.register(toolAdminRoutes, context);
};
