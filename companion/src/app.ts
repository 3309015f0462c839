import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { installDrain } from './http/drain.js';
import { installDataFolderGuard } from './http/data-folder.js';
import { frameworkError, installErrorHandling } from './http/error-handler.js';
import { installJsonBodies } from './http/json-body.js';
import { installPerimeter, type PerimeterInputs } from './http/perimeter.js';
import { installRequestMetrics } from './http/request-metrics.js';
import { RequestLog } from './http/request-log.js';
import { lazyValidators, VALIDATION } from './http/validation.js';
import { adminRoutes } from './routes/admin.js';
import { anthropicRoutes } from './routes/anthropic.js';
import { agentRoutes } from './routes/agents.js';
import { healthRoutes } from './routes/health.js';
import { imageRoutes } from './routes/images.js';
import { mcpRoutes } from './routes/mcp.js';
import { mediaRoutes } from './routes/media.js';
import { memoryRoutes } from './routes/memory.js';
import { metricsRoutes } from './routes/metrics.js';
import { ollamaRoutes } from './routes/ollama.js';
import { openaiRoutes } from './routes/openai.js';
import { routeContexts, type Restarter } from './routes/contexts.js';
import { webRoutes } from './routes/web.js';
import type { OllamaListenerStatus } from '#shared/api/admin.js';
import type { Services } from './services.js';

export interface AppOptions {
  services: Services;
  /** Folder of the built PWA (build/web). */
  webRoot: string;
  /** A pino logger; none means silent. */
  logger?: FastifyBaseLogger;
  /** The Ollama listener, whose state the Server screen shows (none: off). */
  ollamaListener?: { status(): OllamaListenerStatus };
  /** Restarting the companion from the app (given by `hearth serve`; none: POST /admin/restart answers restart_unavailable). */
  restart?: Restarter;
  /** Compile every route's request schemas when the listener starts (a test's check of them), not at each route's first request. */
  schemasAtStart?: boolean;
}

/** Builds the HTTP app; the order of registration below is the route table. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { services } = options;
  const app = Fastify(serverOptions(options));
  // JSON only: a text/plain body must be 415, not a string that fails validation later.
  app.removeContentTypeParser('text/plain');
  installJsonBodies(app);
  installErrorHandling(app);
  // First of the hooks: a request the perimeter refuses is counted too.
  installRequestMetrics(app, () => services.metrics);
  installDrain(app, () => services.stopWork());
  installPerimeter(app, perimeterInputs(services));
  installDataFolderGuard(app, services.dataFolder);
  // Each family gets only its own context (routes/contexts.ts), never the whole of Services.
  const listener = options.ollamaListener;
  const contexts = routeContexts(services, options.webRoot, listener && (() => listener.status()), options.restart);
  await app.register(healthRoutes, contexts.health);
  await app.register(metricsRoutes, contexts.metrics);
  await app.register(openaiRoutes, contexts.openai);
  await app.register(anthropicRoutes, contexts.anthropic);
  await app.register(ollamaRoutes, contexts.ollama);
  await app.register(imageRoutes, contexts.images);
  await app.register(mediaRoutes, contexts.media);
  await app.register(agentRoutes, contexts.agents);
  await app.register(adminRoutes, contexts.admin);
  await app.register(memoryRoutes, contexts.memory);
  await app.register(mcpRoutes, contexts.mcp);
  await app.register(webRoutes, contexts.web);
  return app;
}

/** What the perimeter reads of the running server; the Ollama listener guards with the same. */
export function perimeterInputs(services: Services): PerimeterInputs {
  return {
    server: () => services.config.server,
    keys: services.keys,
    admin: services.admin,
    agents: services.dispatcher,
    channel: () => services.channel.status(),
  };
}

/** Fastify settings both listeners share (this one and the secure channel's). */
export function serverOptions(options: Omit<AppOptions, 'webRoot'>) {
  const { services } = options;
  return {
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false as const }),
    // One line per request at debug, not two JSON lines at info.
    logController: new RequestLog(),
    bodyLimit: services.config.server.body_limit_mb * 1024 * 1024,
    ajv: VALIDATION,
    ...(options.schemasAtStart ? {} : { schemaController: { compilersFactory: { buildValidator: lazyValidators() } } }),
    // Time to receive a whole request (slow-client defence); generating the answer is not limited.
    requestTimeout: services.config.server.limits.request_timeout_seconds * 1000,
    forceCloseConnections: true,
    frameworkErrors: frameworkError,
    return503OnClosing: true,
  };
}
