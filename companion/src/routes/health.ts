import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import type { HealthStatus } from '../../../shared/src/api/openai.js';

export async function healthRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  app.get('/health', async (): Promise<HealthStatus> => ({ status: 'ok', version: options.services.version }));
}
