import type { HealthStatus } from '#shared/api/openai.js';
import { HearthError } from '../errors.js';
import type { HealthContext } from './contexts.js';
import type { RoutePlugin } from './plugin.js';

export const healthRoutes: RoutePlugin<HealthContext> = async (app, { version, dataFolder }) => {
  app.get('/health', async (_request, reply): Promise<HealthStatus> => {
    if (!dataFolder.gone) return { status: 'ok', version };
    // Up, but unable to save anything: a monitor or a pool in front takes it out of service.
    const problem = new HearthError('data_folder_gone');
    void reply.status(problem.status);
    return { status: 'error', version, error: problem.toBody().error };
  });
};
