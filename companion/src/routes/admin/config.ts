import type { FastifyInstance } from 'fastify';
import { apply, plan, serialize, type ConfigTarget } from '../../config/apply.js';
import { configSchema } from '../../config/schema.js';
import type { AdminContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import type { BodySchema } from '../schema.js';
import type { ApplyRequest, PlanRequest } from '#shared/api/admin-config.js';

export const changeBody = {
  type: 'object',
  required: ['document'],
  additionalProperties: false,
  properties: { document: { type: 'object' }, prune: { type: 'boolean' }, confirm_high_risk: { type: 'boolean' } },
} as const satisfies BodySchema<ApplyRequest>;

export const exportQuery = { type: 'object', properties: { format: { enum: ['yaml', 'json'] } } } as const;

export const configRoutes: RoutePlugin<AdminContext, 'config' | 'configTarget'> = async (app, context) => {
  const { config } = context;
  const bodyLimit = config().server.limits.admin_body_kb * 1024;
  const target = configTarget(context, app);

  app.get<{ Querystring: { format?: string } }>('/admin/config/export', { schema: { querystring: exportQuery } }, async (request, reply) => {
    const format = request.query.format === 'json' ? 'json' : 'yaml';
    return reply
      .type(format === 'json' ? 'application/json' : 'application/yaml; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(serialize(config(), format));
  });

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
};

/** What plan and apply need of the running server (also used by routes that change one section): the context's, and where the app listens. */
export function configTarget(context: Pick<AdminContext, 'configTarget'>, app: FastifyInstance): ConfigTarget {
  return {
    ...context.configTarget,
    listening: () => {
      const address = app.server.address();
      return typeof address === 'object' && address ? address.address : undefined;
    },
  };
}
