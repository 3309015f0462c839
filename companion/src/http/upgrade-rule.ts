import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLoopbackAddress, proxyHeaderOf } from '../access/hosts.js';
import { HearthError } from '../errors.js';
import type { ChannelStatus } from '#shared/api/remote.js';

/**
 * The upgrade rule, part of the agent family's guard (the perimeter applies it first, before any
 * key is looked at): agent routes are protected remote routes. Over this plain-HTTP listener they
 * answer only callers on this machine; anyone else gets 426 Upgrade Required with
 * `Upgrade: TLS/1.3`, naming the secure channel's port (pair the device, then use that port).
 */
export function refuseRemoteAgentCall(request: FastifyRequest, reply: FastifyReply, channel: () => ChannelStatus): void {
  // A request that came through a proxy did not start on this machine, whatever its socket says.
  if (isLoopbackAddress(request.socket.remoteAddress) && !proxyHeaderOf(request.headers)) return;
  const status = channel();
  const port = status.url ? new URL(status.url).port : null;
  void reply.header('upgrade', 'TLS/1.3').header('connection', 'Upgrade');
  throw new HearthError(
    'upgrade_required',
    port
      ? `Agent routes from another machine need the secure channel: TLS 1.3 on port ${port} with a paired device's certificate. Pair this device first (on the host: hearth devices pair; here: hearth remote add).`
      : 'Agent routes from another machine need the secure channel, which is off on this host: set server.remote.enabled: true and restart Hearth, then pair the device (hearth devices pair).',
  );
}
