import type { ChannelContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import type { BodySchema } from '../schema.js';
import type { PairRequest, PairResponse } from '#shared/api/remote.js';

export const pairBody = {
  type: 'object',
  required: ['code', 'csr', 'name'],
  additionalProperties: false,
  properties: {
    code: { type: 'string', minLength: 1, maxLength: 32 },
    csr: { type: 'string', minLength: 1, maxLength: 8192 },
    name: { type: 'string', minLength: 1, maxLength: 100 },
  },
} as const satisfies BodySchema<PairRequest>;

/** POST /pair: a one-time code and a CSR in, the device's client certificate out. */
export const pairingRoutes: RoutePlugin<ChannelContext, 'channel'> = async (app, { channel }) => {
  app.post<{ Body: PairRequest }>('/pair', { schema: { body: pairBody }, bodyLimit: 16 * 1024 }, async (request, reply): Promise<PairResponse> => {
    const paired = await channel.pair(request.body, request.socket.remoteAddress);
    request.log.info({ device: paired.device_id }, 'device paired');
    void reply.status(201).header('cache-control', 'no-store');
    return paired;
  });
};
