import type { HealthStatus } from '#shared/api/openai.js';
import type { HealthContext } from './contexts.js';
import type { RoutePlugin } from './plugin.js';

export const healthRoutes: RoutePlugin<HealthContext> = async (app, { version }) => {
  app.get('/health', async (): Promise<HealthStatus> => ({ status: 'ok', version }));
};
