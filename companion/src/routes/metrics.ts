import type { FastifyInstance } from 'fastify';
import type { RouteOptions } from './plugin.js';

/**
 * GET /metrics: the Prometheus text exposition format. The perimeter answers it for this machine's
 * own requests, and for a key with the metrics scope.
 */
export async function metricsRoutes(app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.get('/metrics', async (_request, reply) => {
    const text = await services.metrics.render();
    return reply.header('content-type', services.metrics.contentType).header('cache-control', 'no-store').send(text);
  });
}
