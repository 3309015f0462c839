import type { FastifyInstance } from 'fastify';
import type { HealthStatus } from '#shared/api/openai.js';
import type { RouteOptions } from './plugin.js';

export async function healthRoutes(app: FastifyInstance, options: RouteOptions): Promise<void> {
  app.get('/health', async (): Promise<HealthStatus> => ({ status: 'ok', version: options.services.version }));
}
