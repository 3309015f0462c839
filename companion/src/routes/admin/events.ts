import type { FastifyInstance } from 'fastify';
import { openEventStream } from '../../http/sse.js';
import type { RouteOptions } from '../plugin.js';

/** GET /admin/events: the app's status stream (activity samples, load progress, download changes). */
export async function statusEventRoutes(app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.get('/admin/events', async (request, reply) => {
    const stream = openEventStream(request, reply, services.shutdown);
    stream.data({ type: 'snapshot', ...services.monitor.snapshot(), downloads: services.downloads.list() });
    const stops = [
      services.monitor.subscribe((event) => stream.data(event)),
      services.downloads.subscribe((download) => stream.data({ type: 'download', download })),
    ];
    // A comment now and then keeps proxies and idle timers from closing a quiet stream.
    const keepAlive = setInterval(() => stream.raw(': keep-alive\n\n'), 15_000);
    stream.signal.addEventListener(
      'abort',
      () => {
        clearInterval(keepAlive);
        for (const stop of stops) stop();
        stream.end();
      },
      { once: true },
    );
  });
}
