import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { OllamaListenerStatus } from '#shared/api/admin.js';
import { perimeterInputs, serverOptions } from './app.js';
import { HearthError } from './errors.js';
import { installDrain } from './http/drain.js';
import { installDataFolderGuard } from './http/data-folder.js';
import { installErrorHandling } from './http/error-handler.js';
import { installJsonBodies } from './http/json-body.js';
import { installPerimeter } from './http/perimeter.js';
import { installRequestMetrics } from './http/request-metrics.js';
import { routeContexts } from './routes/contexts.js';
import { ollamaRoutes } from './routes/ollama.js';
import { ollamaError } from './routes/ollama/errors.js';
import type { Services } from './services.js';

/** Ollama's own listening address: apps that expect Ollama look there. */
export const OLLAMA_HOST = '127.0.0.1';

/**
 * The Ollama listener's app: exactly the /api routes of the main listener (same perimeter, same
 * keys), and `GET /` answering "Ollama is running" as Ollama does, since clients probe it.
 */
export async function buildOllamaApp(options: { services: Services; logger?: FastifyBaseLogger }): Promise<FastifyInstance> {
  const { services } = options;
  const app = Fastify(serverOptions(options));
  app.removeContentTypeParser('text/plain');
  installJsonBodies(app);
  installErrorHandling(app, ollamaError);
  // Counted with the main listener's requests (GET /metrics), its refusals included.
  installRequestMetrics(app, () => services.metrics);
  installDrain(app, () => services.stopWork());
  installPerimeter(app, perimeterInputs(services));
  installDataFolderGuard(app, services.dataFolder);
  app.get('/', async (_request, reply) => reply.type('text/plain; charset=utf-8').send('Ollama is running'));
  await app.register(ollamaRoutes, routeContexts(services).ollama);
  app.setNotFoundHandler(async (request) => {
    throw new HearthError(
      'route_not_found',
      `No route for ${request.method} ${request.url.split('?')[0]}: this port answers only Ollama's API (/api/…). Hearth's own API and app are on its main address.`,
    );
  });
  return app;
}

/**
 * The listener for apps that expect Ollama (server.ollama): opened when Hearth starts if it is
 * enabled. A port already taken (Ollama itself running, say) is refused with a message and the
 * companion runs on without it; `status()` says so to the Server screen.
 */
export class OllamaListener {
  private state: OllamaListenerStatus = { state: 'off' };
  private app: FastifyInstance | undefined;

  status(): OllamaListenerStatus {
    return this.state;
  }

  async open(services: Services, logger?: FastifyBaseLogger): Promise<void> {
    const settings = services.config.server.ollama;
    if (!settings.enabled) return;
    const app = await buildOllamaApp({ services, logger });
    try {
      await app.listen({ host: OLLAMA_HOST, port: settings.port });
    } catch (error) {
      await app.close();
      const taken = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
      const problem = taken
        ? `Port ${settings.port} on ${OLLAMA_HOST} is already in use (Ollama itself may be running there), so Hearth does not answer as Ollama on it. Stop the other program and restart Hearth, or point the app at Hearth's own address (/api is served there too).`
        : `Could not listen on ${OLLAMA_HOST}:${settings.port}: ${(error as Error).message}`;
      this.state = { state: 'refused', problem };
      logger?.warn(problem);
      return;
    }
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : settings.port;
    this.app = app;
    this.state = { state: 'listening', url: `http://${OLLAMA_HOST}:${port}` };
    logger?.info({ url: this.state.url }, 'answering as Ollama');
  }

  async close(): Promise<void> {
    await this.app?.close();
  }
}
