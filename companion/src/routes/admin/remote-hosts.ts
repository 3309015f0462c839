import { apply } from '../../config/apply.js';
import type { AdminContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { type BodySchema, pathParams, shortName } from '../schema.js';
import { configTarget } from './config.js';
import type { AddRemoteHostRequest, RemoteHostList, RemoteHostStatus } from '#shared/api/remote.js';

export const addBody = {
  type: 'object',
  required: ['name', 'url', 'code', 'fingerprint'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]*$', maxLength: 64 },
    url: { type: 'string', pattern: '^https://', maxLength: 300 },
    code: { type: 'string', minLength: 1, maxLength: 32 },
    fingerprint: { type: 'string', minLength: 1, maxLength: 200 },
  },
} as const satisfies BodySchema<AddRemoteHostRequest>;

export const nameParams = pathParams({ name: shortName });

/** The device side of pairing: hosts this companion is paired with (remote_hosts), added, checked and removed. */
export const remoteHostRoutes: RoutePlugin<AdminContext, 'config' | 'configTarget' | 'pairedHosts'> = async (app, context) => {
  const { config, pairedHosts } = context;
  const target = configTarget(context, app);

  // Pairs, keeps the credential as a secret, and records the host in the configuration (config.yaml).
  app.post<{ Body: AddRemoteHostRequest }>('/admin/remote-hosts', { schema: { body: addBody } }, async (request, reply): Promise<RemoteHostStatus> => {
    const { settings, agents, deviceId } = await pairedHosts.pair(request.body);
    // Pairing with a code and a checked fingerprint is the owner's confirmation (re-pairing a name re-points its credential).
    await apply(target, { document: { version: 1, remote_hosts: [settings] }, prune: false, confirm: true, peer: request.socket.remoteAddress ?? '' });
    void reply.status(201);
    return { name: settings.name, url: settings.url, fingerprint: settings.fingerprint, device_id: deviceId, state: 'connected', message: null, agents };
  });

  app.get('/admin/remote-hosts', async (): Promise<RemoteHostList> => ({
    object: 'list',
    data: await Promise.all(config().remote_hosts.map((host) => pairedHosts.status(host.name))),
  }));

  app.get<{ Params: { name: string } }>('/admin/remote-hosts/:name', { schema: { params: nameParams } }, async (request) =>
    pairedHosts.status(request.params.name),
  );

  // Removes the entry and the device credential; the host keeps its record until its owner revokes it.
  app.delete<{ Params: { name: string } }>('/admin/remote-hosts/:name', { schema: { params: nameParams } }, async (request) => {
    const name = request.params.name;
    pairedHosts.settings(name); // 404 for an unknown name
    const remaining = { ...config(), remote_hosts: config().remote_hosts.filter((host) => host.name !== name) };
    await apply(target, { document: remaining, prune: true, confirm: true, peer: request.socket.remoteAddress ?? '' });
    pairedHosts.forget(name);
    return { name, deleted: true };
  });
};
