import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { installDrain } from './http/drain.js';
import { frameworkError, installErrorHandling } from './http/error-handler.js';
import { installPerimeter } from './http/perimeter.js';
import { installUpgradeRule } from './http/upgrade-rule.js';
import { RequestLog } from './http/request-log.js';
import { adminRoutes } from './routes/admin.js';
import { agentRoutes } from './routes/agents.js';
import { healthRoutes } from './routes/health.js';
import { imageRoutes } from './routes/images.js';
import { mcpRoutes } from './routes/mcp.js';
import { mediaRoutes } from './routes/media.js';
import { memoryRoutes } from './routes/memory.js';
import { openaiRoutes } from './routes/openai.js';
import type { RouteOptions } from './routes/plugin.js';
import { webRoutes } from './routes/web.js';
import type { Services } from './services.js';

export interface AppOptions {
  services: Services;
  /** Folder of the built PWA (build/web). */
  webRoot: string;
  /** A pino logger; none means silent. */
  logger?: FastifyBaseLogger;
}

/** Builds the HTTP app; the order of registration below is the route table. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { services } = options;
  const app = Fastify(serverOptions(options));
  // JSON only: a text/plain body must be 415, not a string that fails validation later.
  app.removeContentTypeParser('text/plain');
  installErrorHandling(app);
  // Before the perimeter: no key makes a plain-HTTP agent call from another machine acceptable.
  installUpgradeRule(app, () => services.channel.status());
  installDrain(app, () => services.stopWork());
  installPerimeter(app, { server: () => services.config.server, keys: services.keys, admin: services.admin, agents: services.dispatcher });
  const routeOptions: RouteOptions = { services, webRoot: options.webRoot };
  await app.register(healthRoutes, routeOptions);
  await app.register(openaiRoutes, routeOptions);
  await app.register(imageRoutes, routeOptions);
  await app.register(mediaRoutes, routeOptions);
  await app.register(agentRoutes, routeOptions);
  await app.register(adminRoutes, routeOptions);
  await app.register(memoryRoutes, routeOptions);
  await app.register(mcpRoutes, routeOptions);
  await app.register(webRoutes, routeOptions);
  return app;
}

/** Fastify settings both listeners share (this one and the secure channel's). */
export function serverOptions(options: Omit<AppOptions, 'webRoot'>) {
  const { services } = options;
  return {
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false as const }),
    // One line per request at debug, not two JSON lines at info.
    logController: new RequestLog(),
    bodyLimit: services.config.server.body_limit_mb * 1024 * 1024,
    // Clients must get 400 for wrong types, not a silent coercion of "5" into 5.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
    // Time to receive a whole request (slow-client defence); generating the answer is not limited.
    requestTimeout: services.config.server.limits.request_timeout_seconds * 1000,
    forceCloseConnections: true,
    frameworkErrors: frameworkError,
    return503OnClosing: true,
  };
}
