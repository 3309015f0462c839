import type { TLSSocket } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import { HearthError } from '../errors.js';
import type { ChannelHost } from '../channel/host/service.js';
import type { Device } from '../channel/host/devices.js';
import { familyOf } from './perimeter.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The paired device on the secure channel; null on the pairing route and on the local listener. */
    device: Device | null;
  }
}

/**
 * The secure channel's perimeter: a request is served only for a connection whose client
 * certificate chains to this host's device CA and belongs to a paired, unrevoked device
 * (checked on every request). Anything else reaches only the pairing route. Browsers have no
 * business here: a request with an Origin is refused.
 */
export function installChannelPerimeter(app: FastifyInstance, channel: Pick<ChannelHost, 'deviceOf'>): void {
  app.decorateRequest('device', null);
  app.addHook('onRequest', async (request) => {
    if (request.headers.origin !== undefined) throw new HearthError('origin_not_allowed', 'The secure channel accepts no browser requests.');
    const path = request.routeOptions.url ?? request.url.split('?')[0]!;
    // Public routes (pairing, health) are for any TLS client; everything else needs a paired device.
    if (familyOf(path) === 'public') return;
    const device = channel.deviceOf(request.raw.socket as TLSSocket);
    if (!device) throw new HearthError('device_not_paired');
    request.device = device;
  });
}

/** Refuses a device acting for an agent it was not granted at pairing. */
export function assertGranted(device: Device | null, agentId: string): void {
  if (!device?.agents.includes(agentId))
    throw new HearthError(
      'permission_denied',
      `This device may not use agent "${agentId}"; the host grants agents at pairing (hearth devices pair --agents).`,
      {
        param: 'id',
      },
    );
}
