import type { AdminContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { type BodySchema, pathParams, shortName } from '../schema.js';
import type { ChannelStatus, CreatePairingRequest, DeviceList, DeviceRecord, PairingCode } from '#shared/api/remote.js';

export const pairBody = {
  type: 'object',
  additionalProperties: false,
  properties: { agents: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' }, uniqueItems: true, maxItems: 256 } },
} as const satisfies BodySchema<CreatePairingRequest>;

export const idParams = pathParams({ id: shortName });

/** Devices paired over the secure channel (host side): pairing codes, the list, revocation. */
export const deviceRoutes: RoutePlugin<AdminContext, 'channel'> = async (app, { channel }) => {
  app.get('/admin/devices', async (): Promise<DeviceList> => ({ object: 'list', data: channel.list() }));

  app.get('/admin/devices/channel', async (): Promise<ChannelStatus> => channel.status());

  app.post<{ Body: CreatePairingRequest }>('/admin/devices/pair', { schema: { body: pairBody } }, async (request, reply): Promise<PairingCode> => {
    void reply.status(201).header('cache-control', 'no-store');
    return channel.pairingCode(request.body?.agents ?? []);
  });

  // Revoking cuts the device's open connections (streams included) before answering.
  app.delete<{ Params: { id: string } }>('/admin/devices/:id', { schema: { params: idParams } }, async (request): Promise<DeviceRecord> => {
    const record = channel.revoke(request.params.id);
    request.log.info({ device: record.id }, 'device revoked');
    return record;
  });
};
