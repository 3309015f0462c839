import type { FastifyInstance } from 'fastify';
import { apply, plan, serialize } from '../../config/apply.js';
import { configSchema } from '../../config/schema.js';
import type { Services } from '../../services.js';
import type { ApplyRequest, PlanRequest } from '../../../../shared/src/api/admin-config.js';

const changeBody = {
  type: 'object',
  required: ['document'],
  additionalProperties: false,
  properties: { document: { type: 'object' }, prune: { type: 'boolean' }, confirm_high_risk: { type: 'boolean' } },
} as const;

export function configRoutes(app: FastifyInstance, services: Services): void {
  const bodyLimit = services.config.server.limits.admin_body_kb * 1024;

  app.get<{ Querystring: { format?: string } }>(
    '/admin/config/export',
    { schema: { querystring: { type: 'object', properties: { format: { enum: ['yaml', 'json'] } } } } },
    async (request, reply) => {
      const format = request.query.format === 'json' ? 'json' : 'yaml';
      return reply.type(format === 'json' ? 'application/json' : 'application/yaml; charset=utf-8').header('cache-control', 'no-store').send(serialize(services.config, format));
    },
  );

  app.get('/admin/config/schema', async () => configSchema);

  app.post<{ Body: PlanRequest }>('/admin/config/plan', { bodyLimit, schema: { body: changeBody } }, async (request) => plan(services, request.body.document, request.body.prune ?? false));

  app.post<{ Body: ApplyRequest }>('/admin/config/apply', { bodyLimit, schema: { body: changeBody } }, async (request) =>
    apply(services, { document: request.body.document, prune: request.body.prune ?? false, confirm: request.body.confirm_high_risk ?? false, peer: request.socket.remoteAddress ?? 'unknown' }),
  );
}
