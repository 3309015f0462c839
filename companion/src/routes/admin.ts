import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { configRoutes } from './admin/config.js';
import { keyRoutes } from './admin/keys.js';
import { mcpAdminRoutes } from './admin/mcp.js';
import { statusRoutes } from './admin/status.js';

/** The admin family: loopback only (enforced by the perimeter for every /admin path). */
export async function adminRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  statusRoutes(app, options.services);
  keyRoutes(app, options.services);
  configRoutes(app, options.services);
  mcpAdminRoutes(app, options.services);
}
