import { HearthError } from '../../errors.js';
import { AGENT_ID_PATTERN } from '../../ids.js';
import type { AdminContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import type { BodySchema } from '../schema.js';
import { ROUTE_SCOPES, type AccessKeyRecord, type CreatedKey, type CreateKeyRequest } from '#shared/api/access.js';

export const createBody = {
  type: 'object',
  required: ['label'],
  additionalProperties: false,
  properties: {
    label: { type: 'string', minLength: 1, maxLength: 200 },
    agent: { type: ['string', 'null'], pattern: AGENT_ID_PATTERN },
    scopes: { type: 'array', items: { enum: [...ROUTE_SCOPES] }, uniqueItems: true },
    expires_at: { type: ['string', 'null'], format: 'date-time' },
    expires_in_days: { type: ['number', 'null'], exclusiveMinimum: 0, maximum: 36500 },
  },
} as const satisfies BodySchema<CreateKeyRequest>;

export const keyRoutes: RoutePlugin<AdminContext, 'keys'> = async (app, { keys }) => {
  app.post<{ Body: CreateKeyRequest }>('/admin/keys', { schema: { body: createBody } }, async (request, reply): Promise<CreatedKey> => {
    const body = request.body;
    if (body.expires_at && body.expires_in_days)
      throw new HearthError('invalid_request_error', 'Give expires_at or expires_in_days, not both.', { param: 'expires_in_days' });
    const expiresAt = body.expires_at ? Date.parse(body.expires_at) : body.expires_in_days ? Date.now() + body.expires_in_days * 86_400_000 : null;
    const created = keys.create({ label: body.label, agent: body.agent, scopes: body.scopes, expiresAt });
    void reply.status(201).header('cache-control', 'no-store');
    return created;
  });

  app.get('/admin/keys', async (): Promise<{ data: AccessKeyRecord[] }> => ({ data: keys.list() }));

  app.delete<{ Params: { id: string } }>('/admin/keys/:id', async (request): Promise<AccessKeyRecord> => keys.revoke(request.params.id));
};
