import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Metrics } from '../metrics/metrics.js';
import { familyOf } from './perimeter.js';

/** The error table's code each failed reply was answered with (the error handler notes it). */
const codes = new WeakMap<object, string>();

export function noteErrorCode(reply: FastifyReply, code: string): void {
  codes.set(reply.raw, code);
}

/**
 * Counts every request for GET /metrics when its answer ends (a stream when its last event is
 * written, a refused request too): its route family, the model it named, its status, the error's
 * code, and how long it took. Installed before the perimeter, so refusals count as well.
 */
export function installRequestMetrics(app: FastifyInstance, metrics: () => Pick<Metrics, 'observeRequest'>): void {
  app.addHook('onRequest', async (request, reply) => {
    const started = performance.now();
    reply.raw.once('close', () => {
      metrics().observeRequest({
        family: familyOf(request.routeOptions.url ?? pathOf(request)),
        model: modelOf(request),
        status: reply.raw.statusCode,
        seconds: (performance.now() - started) / 1000,
        code: codes.get(reply.raw),
      });
    });
  });
}

function pathOf(request: FastifyRequest): string {
  return request.url.split('?')[0]!;
}

/** The `model` a JSON body named (labels.ts decides whether it may become a label). */
function modelOf(request: FastifyRequest): string | undefined {
  const body = request.body as { model?: unknown } | undefined;
  return typeof body === 'object' && body !== null && typeof body.model === 'string' ? body.model : undefined;
}
