import type { FastifyReply, FastifyRequest } from 'fastify';
import { HearthError } from '../errors.js';

/** Whether a socket address is on the loopback interface (IPv4 127/8, ::1, or IPv4-mapped). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  return plain === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(plain);
}

/** A preHandler that refuses requests whose socket peer is not loopback; headers never count. */
export async function requireLoopback(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  if (!isLoopbackAddress(request.socket.remoteAddress)) {
    throw new HearthError('permission_denied', 'This route is only available from the machine Hearth runs on (loopback).');
  }
}
