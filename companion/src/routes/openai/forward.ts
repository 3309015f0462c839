import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HearthError } from '../../errors.js';
import { clientGone } from '../../http/sse.js';
import { answerText, captureStreamText } from '../../providers/capture.js';
import { rewriteModelJson, rewriteModelStream, type ForwardPath } from '../../providers/client.js';
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

/** Proxies a request to a model provider; streams pass through as they arrive. */
export async function forwardToProvider(
  context: Pick<OpenaiContext, 'providers' | 'shutdown'>,
  forward: Forward,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<unknown> {
  const { modelId, observe } = forward;
  const signal = clientGone(request, reply, context.shutdown);
  const upstream = await context.providers().forward(forward.path, modelId, forward.body, signal, { affinity: affinityOf(request, reply, forward.body) });
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
function affinityOf(request: FastifyRequest, reply: FastifyReply, body: Record<string, unknown>): string[] {
  const keys: string[] = [];
  if (typeof body.previous_response_id === 'string' && body.previous_response_id) keys.push(`response:${body.previous_response_id}`);
  const conversation = reply.getHeader('x-service-conversation-id') ?? request.headers['x-service-conversation-id'];
  const agent = request.headers['x-service-agent-id'];
  if (typeof conversation === 'string' && conversation) keys.push(`conversation:${typeof agent === 'string' ? agent : ''}:${conversation}`);
  for (const field of ['prompt_cache_key', 'user']) if (typeof body[field] === 'string' && body[field]) keys.push(`${field}:${body[field] as string}`);
  return keys;
}
