import { errorBody } from '../errors.js';
import { healthRoutes } from './health.js';
import type { ChannelContext } from './contexts.js';
import { registerParts, type RoutePlugin } from './plugin.js';
import { deviceAgentRoutes } from './channel/agents.js';
import { pairingRoutes } from './channel/pairing.js';

/** The secure channel's routes: pairing for anyone, the granted agents for paired devices, and no admin route. */
export const channelRoutes: RoutePlugin<ChannelContext> = async (app, context) => {
  await registerParts(app, context, [healthRoutes, pairingRoutes, deviceAgentRoutes]);
  app.setNotFoundHandler((request, reply) =>
    reply
      .status(404)
      .send(errorBody('route_not_found', `No route for ${request.method} ${request.url.split('?')[0]} on the secure channel (pairing and agents only).`)),
  );
};
