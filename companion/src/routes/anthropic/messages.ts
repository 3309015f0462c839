import type { FastifyReply, FastifyRequest } from 'fastify';
import { HearthError } from '../../errors.js';
import { resolveGenerator, type Generator } from '../../generation/generate.js';
import { newId } from '../../ids.js';
import { clientGone, openEventStream, type EventStream } from '../../http/sse.js';
import type { GenerationResult } from '../../inference/types.js';
import type { AnthropicContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { attributionOf, lastUserText, recordAttribution, type Attribution } from '../openai/attribution.js';
import { affinityOf } from '../openai/forward.js';
import type { Message, MessageCreateRequest } from '#shared/api/anthropic.js';
import { withModelAdvice } from './claude-code.js';
import { generationOf, type Conversation } from './convert.js';
import { MessageEvents } from './events.js';
import { allowedCalls, messageOf, messageShell } from './message.js';
import { messageCreateBody } from './schema.js';

/** One reply: the model, the request as the generation path takes it, and whom it is attributed to. */
interface Turn {
  generator: Generator;
  generation: Conversation;
  affinity: string[];
  attribution: Attribution | null;
  /** tool_choice.disable_parallel_tool_use: at most one tool_use block, the first call. */
  oneCall: boolean;
}

/** POST /v1/messages (also with ?beta=true, as Claude Code and the SDK's beta client send it). */
export const messageRoutes: RoutePlugin<AnthropicContext> = async (app, context) => {
  app.post<{ Body: MessageCreateRequest }>('/v1/messages', { schema: { body: messageCreateBody } }, async (request, reply) => {
    const body = request.body;
    const attribution = attributionOf(context, request, reply, lastUserText(body.messages));
    const generator = await resolveGenerator(context.generation, body.model).catch((error: unknown) => {
      throw withModelAdvice(error);
    });
    const turn: Turn = {
      generator,
      generation: generationOf(body),
      // metadata.user_id plays the part of chat's `user`: one conversation, one endpoint of a provider pool.
      affinity: affinityOf(request, reply, { user: body.metadata?.user_id ?? undefined }),
      attribution,
      oneCall: body.tool_choice !== undefined && 'disable_parallel_tool_use' in body.tool_choice && body.tool_choice.disable_parallel_tool_use === true,
    };
    return body.stream ? stream(context, turn, request, reply) : answer(context, turn, request, reply);
  });
};

async function answer(context: AnthropicContext, turn: Turn, request: FastifyRequest, reply: FastifyReply): Promise<Message | undefined> {
  const signal = clientGone(request, reply, context.shutdown);
  const result = await turn.generator.run({ ...turn.generation, signal }, { affinity: turn.affinity });
  if (signal.aborted) return undefined;
  recordAttribution(context, request, turn.attribution, result.text);
  return messageOf(newId('msg_'), turn.generator.id, allowedCalls(result, turn.oneCall));
}

/**
 * The reply as Anthropic's events. Problems found before generation (a bad tool schema, a prompt
 * longer than the context, a full queue) are still plain HTTP errors: the stream opens with the
 * first thought or text the model writes (or, for a reply of tool calls only, at its end).
 */
async function stream(context: AnthropicContext, turn: Turn, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const signal = clientGone(request, reply, context.shutdown);
  const id = newId('msg_');
  let stream: { wire: EventStream; events: MessageEvents } | undefined;
  const open = () => {
    if (!stream) {
      const wire = openEventStream(request, reply, signal);
      stream = { wire, events: new MessageEvents((event) => wire.event(event.type, event), messageShell(id, turn.generator.id)) };
    }
    return stream;
  };
  let result: GenerationResult;
  try {
    result = await turn.generator.run(
      { ...turn.generation, signal, onText: (delta) => open().events.text(delta), onReasoning: (delta) => open().events.thinking(delta) },
      { affinity: turn.affinity },
    );
  } catch (error) {
    if (!stream) throw error;
    request.log.error({ err: error }, 'stream failed');
    stream.events.fail(error instanceof HearthError ? error : new HearthError('internal_error'));
    return stream.wire.end();
  }
  const { wire, events } = open();
  if (signal.aborted) {
    // The client left (no one reads this) or the server is shutting down: then say so before ending.
    if (context.shutdown.aborted) events.fail(new HearthError('server_busy', 'The server is shutting down; this reply was cut short.', { retryAfter: 5 }));
    return wire.end();
  }
  recordAttribution(context, request, turn.attribution, result.text);
  events.finish(allowedCalls(result, turn.oneCall));
  wire.end();
}
