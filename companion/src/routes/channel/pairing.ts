import type { FastifyInstance } from 'fastify';
import type { RouteOptions } from '../plugin.js';
import type { PairRequest, PairResponse } from '#shared/api/remote.js';

const pairBody = {
  type: 'object',
  required: ['code', 'csr', 'name'],
  additionalProperties: false,
  properties: {
    code: { type: 'string', minLength: 1, maxLength: 32 },
    csr: { type: 'string', minLength: 1, maxLength: 8192 },
    name: { type: 'string', minLength: 1, maxLength: 100 },
  },
} as const;

/** POST /pair: a one-time code and a CSR in, the device's client certificate out. */
export async function pairingRoutes(app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.post<{ Body: PairRequest }>('/pair', { schema: { body: pairBody }, bodyLimit: 16 * 1024 }, async (request, reply): Promise<PairResponse> => {
    const paired = await services.channel.pair(request.body, request.socket.remoteAddress);
    request.log.info({ device: paired.device_id }, 'device paired');
    void reply.status(201).header('cache-control', 'no-store');
    return paired;
  });
}
