import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientGone } from '../../http/sse.js';
import { rewriteModelJson, rewriteModelStream, type ForwardPath } from '../../inference/remote.js';
import type { Services } from '../../services.js';

/** Proxies a request to a remote provider; streams pass through as they arrive. */
export async function forwardToProvider(services: Services, path: ForwardPath, modelId: string, body: Record<string, unknown>, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const signal = clientGone(request, reply, services.shutdown);
  const upstream = await services.remote.forward(path, modelId, body, signal);
  const type = upstream.headers.get('content-type') ?? 'application/json';
  void reply.status(upstream.status).header('content-type', type);
  if (type.includes('text/event-stream') && upstream.body) {
    void reply.header('cache-control', 'no-cache');
    return reply.send(Readable.fromWeb(rewriteModelStream(upstream.body, modelId) as never));
  }
  const text = await upstream.text();
  try {
    return reply.send(rewriteModelJson(JSON.parse(text), modelId));
  } catch {
    return reply.send(text);
  }
}
