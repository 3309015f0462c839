import { openEventStream } from '../../http/sse.js';
import type { AdminContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';

/** GET /admin/events: the app's status stream (activity samples, load progress, download changes). */
export const statusEventRoutes: RoutePlugin<AdminContext, 'monitor' | 'downloads' | 'shutdown'> = async (app, { monitor, downloads, shutdown }) => {
  app.get('/admin/events', async (request, reply) => {
    const stream = openEventStream(request, reply, shutdown);
    stream.data({ type: 'snapshot', ...monitor.snapshot(), downloads: downloads.list() });
    const stops = [monitor.subscribe((event) => stream.data(event)), downloads.subscribe((download) => stream.data({ type: 'download', download }))];
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
};
