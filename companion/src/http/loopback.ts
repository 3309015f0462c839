import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLoopbackAddress } from '../access/hosts.js';
import { HearthError } from '../errors.js';

/** A preHandler that refuses requests whose socket peer is not loopback; headers never count. */
export async function requireLoopback(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  if (!isLoopbackAddress(request.socket.remoteAddress)) {
    throw new HearthError('permission_denied', 'This route is only available from the machine Hearth runs on (loopback).');
  }
}
