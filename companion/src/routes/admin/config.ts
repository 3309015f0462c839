import type { FastifyInstance } from 'fastify';
import { apply, plan, serialize, type ConfigTarget } from '../../config/apply.js';
import { configSchema } from '../../config/schema.js';
import type { Services } from '../../services.js';
import type { RouteOptions } from '../plugin.js';
import type { ApplyRequest, PlanRequest } from '#shared/api/admin-config.js';

const changeBody = {
  type: 'object',
  required: ['document'],
  additionalProperties: false,
  properties: { document: { type: 'object' }, prune: { type: 'boolean' }, confirm_high_risk: { type: 'boolean' } },
} as const;

export async function configRoutes(app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  const bodyLimit = services.config.server.limits.admin_body_kb * 1024;
  const target = configTarget(services, app);

  app.get<{ Querystring: { format?: string } }>(
    '/admin/config/export',
    { schema: { querystring: { type: 'object', properties: { format: { enum: ['yaml', 'json'] } } } } },
    async (request, reply) => {
      const format = request.query.format === 'json' ? 'json' : 'yaml';
      return reply
        .type(format === 'json' ? 'application/json' : 'application/yaml; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(serialize(services.config, format));
    },
  );

  app.get('/admin/config/schema', async () => configSchema);

  app.post<{ Body: PlanRequest }>('/admin/config/plan', { bodyLimit, schema: { body: changeBody } }, async (request) =>
    plan(target, request.body.document, request.body.prune ?? false),
  );

  app.post<{ Body: ApplyRequest }>('/admin/config/apply', { bodyLimit, schema: { body: changeBody } }, async (request) =>
    apply(target, {
      document: request.body.document,
      prune: request.body.prune ?? false,
      confirm: request.body.confirm_high_risk ?? false,
      peer: request.socket.remoteAddress ?? 'unknown',
    }),
  );
}

/** What plan and apply need of the running server (also used by routes that change one section). */
export function configTarget(services: Services, app: FastifyInstance): ConfigTarget {
  return {
    current: () => services.config,
    path: services.paths.config,
    db: services.db,
    resolves: (reference) => services.secrets.resolve(reference) !== undefined,
    localModelIds: async () => (await services.catalog.local(true)).map((model) => model.id),
    activeKeys: () => services.keys.activeCount(),
    toolClass: (name) => services.mcp.catalog.get(name)?.class,
    listening: () => {
      const address = app.server.address();
      return typeof address === 'object' && address ? address.address : undefined;
    },
    loadedModels: () => services.engine.status().map((model) => model.id),
    reconfigure: (next) => services.reconfigure(next),
  };
}
