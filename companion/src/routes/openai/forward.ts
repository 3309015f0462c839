import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HearthError } from '../../errors.js';
import { clientGone } from '../../http/sse.js';
import { answerText, captureStreamText } from '../../providers/capture.js';
import { rewriteModelJson, rewriteModelStream, type ForwardPath } from '../../providers/client.js';
import type { Services } from '../../services.js';

/**
 * Proxies a request to a model provider; streams pass through as they arrive. `observe`, when
 * given, gets the assistant's text of a successful answer once it is complete (attribution).
 */
export async function forwardToProvider(
  services: Services,
  path: ForwardPath,
  modelId: string,
  body: Record<string, unknown>,
  request: FastifyRequest,
  reply: FastifyReply,
  observe?: (text: string) => void,
): Promise<unknown> {
  const signal = clientGone(request, reply, services.shutdown);
  const upstream = await services.providers.forward(path, modelId, body, signal);
  if (upstream.status === 401 || upstream.status === 403) {
    // The provider refused Hearth's key for it: that is not the client's key to Hearth.
    await upstream.body?.cancel();
    const provider = modelId.split('/')[0]!;
    throw new HearthError(
      'provider_error',
      `The provider "${provider}" refused the API key configured for it (HTTP ${upstream.status}). Check its api_key in config.yaml and the secret it refers to.`,
    );
  }
  const type = upstream.headers.get('content-type') ?? 'application/json';
  void reply.status(upstream.status).header('content-type', type);
  if (type.includes('text/event-stream') && upstream.body) {
    void reply.header('cache-control', 'no-cache');
    const relayed = rewriteModelStream(upstream.body, modelId);
    const watched = observe && upstream.ok ? captureStreamText(relayed, observe) : relayed;
    return reply.send(Readable.fromWeb(watched as never));
  }
  const text = await upstream.text();
  try {
    const json: unknown = JSON.parse(text);
    if (observe && upstream.ok) observe(answerText(json));
    return reply.send(rewriteModelJson(json, modelId));
  } catch {
    return reply.send(text);
  }
}
