import type { FastifyInstance } from 'fastify';
import { errorBody } from '../errors.js';
import { healthRoutes } from './health.js';
import type { RouteOptions } from './plugin.js';
import { deviceAgentRoutes } from './channel/agents.js';
import { pairingRoutes } from './channel/pairing.js';

/** The secure channel's routes: pairing for anyone, the granted agents for paired devices, and no admin route. */
export async function channelRoutes(app: FastifyInstance, options: RouteOptions): Promise<void> {
  await app.register(healthRoutes, options);
  await app.register(pairingRoutes, options);
  await app.register(deviceAgentRoutes, options);
  app.setNotFoundHandler((request, reply) =>
    reply
      .status(404)
      .send(errorBody('route_not_found', `No route for ${request.method} ${request.url.split('?')[0]} on the secure channel (pairing and agents only).`)),
  );
}
