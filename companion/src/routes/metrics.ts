import type { MetricsContext } from './contexts.js';
import type { RoutePlugin } from './plugin.js';

/**
 * GET /metrics: the Prometheus text exposition format. The perimeter answers it for this machine's
 * own requests, and for a key with the metrics scope.
 */
export const metricsRoutes: RoutePlugin<MetricsContext> = async (app, { metrics }) => {
  app.get('/metrics', async (_request, reply) => {
    const text = await metrics.render();
    return reply.header('content-type', metrics.contentType).header('cache-control', 'no-store').send(text);
  });
};
