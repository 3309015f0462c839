import { cloudRoutes } from './admin/cloud.js';
import { configRoutes } from './admin/config.js';
import { deviceRoutes } from './admin/devices.js';
import { draftRoutes } from './admin/drafts.js';
import { engineRoutes } from './admin/engine.js';
import { remoteHostRoutes } from './admin/remote-hosts.js';
import { restartRoutes } from './admin/restart.js';
import { statusEventRoutes } from './admin/events.js';
import { keyRoutes } from './admin/keys.js';
import { mcpAdminRoutes } from './admin/mcp.js';
import { modelEstimateRoutes } from './admin/model-estimate.js';
import { modelLibraryRoutes } from './admin/model-library.js';
import { sessionRoutes } from './admin/session.js';
import { signInRequestRoutes } from './admin/sign-in-requests.js';
import { statusRoutes } from './admin/status.js';
import { toolAdminRoutes } from './admin/tools.js';
import type { AdminContext } from './contexts.js';
import { defaultBodyLimit, registerParts, type RoutePlugin } from './plugin.js';

/** The admin family: loopback only, with the admin credential (both enforced by the perimeter for every /admin path). */
export const adminRoutes: RoutePlugin<AdminContext> = async (app, context) => {
  // Every admin route takes bodies up to server.limits.admin_body_kb.
  defaultBodyLimit(app, context.config().server.limits.admin_body_kb * 1024);
  await registerParts(app, context, [
    statusRoutes,
    keyRoutes,
    configRoutes,
    mcpAdminRoutes,
    deviceRoutes,
    remoteHostRoutes,
    cloudRoutes,
    modelLibraryRoutes,
    modelEstimateRoutes,
    draftRoutes,
    engineRoutes,
    statusEventRoutes,
    sessionRoutes,
    restartRoutes,
    signInRequestRoutes,
    toolAdminRoutes,
  ]);
};
