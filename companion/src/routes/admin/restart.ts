import { HearthError } from '../../errors.js';
import type { AdminContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import type { RestartAnswer } from '#shared/api/admin.js';

/**
 * POST /admin/restart: the companion stops as at Ctrl+C and `hearth serve` starts it again in the
 * same terminal, with the same data folder and address (commands/restart.ts). The answer goes out
 * first; the app then waits for GET /admin/status to answer a later `started_at`.
 */
export const restartRoutes: RoutePlugin<AdminContext, 'restart' | 'startedAt'> = async (app, { restart, startedAt }) => {
  app.post('/admin/restart', async (_request, reply): Promise<RestartAnswer> => {
    if (!restart) throw new HearthError('restart_unavailable');
    // Once the answer is written: closing waits for open responses, and this one is done by then.
    reply.raw.once('finish', () => restart.begin());
    reply.code(202);
    return { restarting: true, url: restart.url(), started_at: startedAt() ?? '' };
  });
};
