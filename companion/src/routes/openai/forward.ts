import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HearthError } from '../../errors.js';
import { clientGone } from '../../http/sse.js';
import { answerText, textCapture } from '../../providers/capture.js';
import { modelRewrite, rewriteModelJson, type ForwardPath } from '../../providers/client.js';
import { readAnswer } from '../../providers/read-body.js';
import type { OpenaiContext } from '../contexts.js';

/** A request for a provider model, as it goes to the provider. */
export interface Forward {
  path: ForwardPath;
  /** `<provider>/<model>`. */
  modelId: string;
  body: Record<string, unknown>;
  /** Gets the assistant's text of a successful answer once it is complete (attribution). */
  observe?: (text: string) => void;
}

/**
 * Proxies a request to a model provider; streams pass through as they arrive, their lines read
 * once by the relay (providers/relay.ts) with the model id rewritten and, for attribution, the
 * assistant's text captured.
 */
export async function forwardToProvider(
  context: Pick<OpenaiContext, 'providers' | 'shutdown'>,
  forward: Forward,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<unknown> {
  const { modelId, observe } = forward;
  const signal = clientGone(request, reply, context.shutdown);
  const hooks = [modelRewrite(modelId), ...(observe ? [textCapture(observe)] : [])];
  const upstream = await context
    .providers()
    .forward(forward.path, modelId, forward.body, signal, { affinity: affinityOf(request, reply, forward.body), hooks });
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
    return reply.send(Readable.fromWeb(upstream.body as never));
  }
  // A JSON answer is read whole to rewrite its model, so only up to a limit (read-body.ts).
  const text = await readAnswer(upstream, modelId.split('/')[0]!);
  try {
    const json: unknown = JSON.parse(text);
    if (observe && upstream.ok) observe(answerText(json));
    return reply.send(rewriteModelJson(json, modelId));
  } catch {
    return reply.send(text);
  }
}

/**
 * What ties this request to earlier ones, for a provider pool's conversation affinity, strongest
 * first: the Responses chain it continues, the conversation (`X-Service-Conversation-Id`, the one
 * attribution answered with when it made a new one), then `prompt_cache_key` and `user`.
 */
export function affinityOf(request: FastifyRequest, reply: FastifyReply, body: Record<string, unknown>): string[] {
  const keys: string[] = [];
  if (typeof body.previous_response_id === 'string' && body.previous_response_id) keys.push(`response:${body.previous_response_id}`);
  const conversation = reply.getHeader('x-service-conversation-id') ?? request.headers['x-service-conversation-id'];
  const agent = request.headers['x-service-agent-id'];
  if (typeof conversation === 'string' && conversation) keys.push(`conversation:${typeof agent === 'string' ? agent : ''}:${conversation}`);
  for (const field of ['prompt_cache_key', 'user']) if (typeof body[field] === 'string' && body[field]) keys.push(`${field}:${body[field] as string}`);
  return keys;
}
