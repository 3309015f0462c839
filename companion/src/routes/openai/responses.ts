import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HearthError } from '../../errors.js';
import { newId, unixSeconds } from '../../ids.js';
import { clientGone, openEventStream, type EventStream } from '../../http/sse.js';
import type { LocalModel } from '../../models/registry.js';
import { RESPONSES_FIELDS, type GenerationRequest, type GenerationResult } from '../../inference/types.js';
import type { Services } from '../../services.js';
import type { RouteOptions } from '../plugin.js';
import type {
  InputItem,
  OutputItem,
  OutputTextPart,
  ResponseCreateRequest,
  ResponseDeleted,
  ResponseObject,
  ResponseStreamEvent,
} from '#shared/api/responses.js';
import { attributionOf, lastUserText, recordAttribution, type Attribution } from './attribution.js';
import { forwardToProvider } from './forward.js';
import { finishedResponse, historyOf, inputItemsOf, outputFormatOf, outputItemsOf, responseShell, toolModeOf, toolsOf } from './responses-convert.js';
import { responseCreateBody, responseIdParams } from './responses-schema.js';

type Unnumbered<Event> = Event extends unknown ? Omit<Event, 'sequence_number'> : never;
type StreamEvent = Unnumbered<ResponseStreamEvent>;

/** One local generation: the parsed request, its stored context and the response it becomes. */
interface Turn {
  info: LocalModel;
  body: ResponseCreateRequest;
  input: InputItem[];
  generation: GenerationRequest;
  shell: ResponseObject;
  attribution: Attribution | null;
}

export async function responsesRoutes(app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.post<{ Body: ResponseCreateRequest }>('/v1/responses', { schema: { body: responseCreateBody } }, async (request, reply) => {
    const body = request.body;
    const attribution = attributionOf(services, request, reply, lastUserText(inputItemsOf(body.input)));
    const target = await services.catalog.resolve(body.model);
    if (target.kind === 'provider')
      return forwardToProvider(services, '/responses', target.id, body as unknown as Record<string, unknown>, request, reply, (text) =>
        recordAttribution(services, request, attribution, text),
      );
    const turn = turnOf(services, target.info, body, clientGone(request, reply, services.shutdown), attribution);
    return body.stream ? streamLocal(services, turn, request, reply) : answerLocal(services, turn, request);
  });

  app.get<{ Params: { id: string } }>('/v1/responses/:id', { schema: { params: responseIdParams } }, async (request) => {
    const response = services.responses.get(request.params.id);
    if (!response) throw notFound(request.params.id);
    return response;
  });

  app.delete<{ Params: { id: string } }>('/v1/responses/:id', { schema: { params: responseIdParams } }, async (request): Promise<ResponseDeleted> => {
    if (!services.responses.delete(request.params.id)) throw notFound(request.params.id);
    return { id: request.params.id, object: 'response', deleted: true };
  });
}

function notFound(id: string): HearthError {
  return new HearthError('response_not_found', `No stored response has the id "${id}".`);
}

function turnOf(services: Services, info: LocalModel, body: ResponseCreateRequest, signal: AbortSignal, attribution: Attribution | null): Turn {
  const input = inputItemsOf(body.input);
  const previous = body.previous_response_id ? services.responses.conversation(body.previous_response_id) : [];
  const tools = toolsOf(body.tools);
  const generation: GenerationRequest = {
    model: info.id,
    history: historyOf(body.instructions, previous, input),
    maxTokens: body.max_output_tokens ?? undefined,
    sampling: { temperature: body.temperature ?? undefined, topP: body.top_p ?? undefined },
    stop: [],
    tools,
    toolMode: toolModeOf(body.tool_choice, tools),
    output: outputFormatOf(body.text?.format),
    signal,
    fields: RESPONSES_FIELDS,
  };
  return { info, body, input, generation, shell: responseShell(newId('resp_'), unixSeconds(), info.id, body), attribution };
}

/** Finishes the turn: builds the Response object and commits it unless store is false. */
function settle(services: Services, turn: Turn, result: GenerationResult, messageId: string): ResponseObject {
  const response = finishedResponse(turn.shell, result, outputItemsOf(result, messageId));
  if (turn.body.store !== false) services.responses.save(response, turn.input);
  return response;
}

async function answerLocal(services: Services, turn: Turn, request: FastifyRequest): Promise<ResponseObject> {
  const result = await services.engine.run(turn.info, turn.generation);
  if (turn.generation.signal.aborted) throw stopped();
  const response = settle(services, turn, result, newId('msg_'));
  recordAttribution(services, request, turn.attribution, result.text);
  return response;
}

/**
 * Streams the protocol's typed events. The stream opens at the first generated text (or at the
 * end when there is none), so failures before generation stay plain HTTP errors.
 */
async function streamLocal(services: Services, turn: Turn, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const messageId = newId('msg_');
  const part = (text: string): OutputTextPart => ({ type: 'output_text', text, annotations: [] });
  const at = { item_id: messageId, output_index: 0, content_index: 0 };
  let stream: EventStream | undefined;
  let sequence = 0;
  let messageOpen = false;
  const send = (event: StreamEvent) => stream!.event(event.type, { ...event, sequence_number: sequence++ });
  const open = (): EventStream => {
    if (stream) return stream;
    stream = openEventStream(request, reply, services.shutdown);
    send({ type: 'response.created', response: turn.shell });
    send({ type: 'response.in_progress', response: turn.shell });
    return stream;
  };
  const openMessage = () => {
    open();
    if (messageOpen) return;
    messageOpen = true;
    send({
      type: 'response.output_item.added',
      output_index: 0,
      item: { type: 'message', id: messageId, status: 'in_progress', role: 'assistant', content: [] },
    });
    send({ type: 'response.content_part.added', ...at, part: part('') });
  };
  turn.generation.onText = (delta) => {
    if (!delta) return;
    openMessage();
    send({ type: 'response.output_text.delta', ...at, delta, logprobs: [] });
  };

  let result: GenerationResult;
  let response: ResponseObject;
  try {
    result = await services.engine.run(turn.info, turn.generation);
    if (turn.generation.signal.aborted) throw stopped();
    response = settle(services, turn, result, messageId);
    recordAttribution(services, request, turn.attribution, result.text);
  } catch (error) {
    if (!stream) throw error;
    const failure = error instanceof HearthError ? error : new HearthError('internal_error');
    send({ type: 'error', code: failure.code, message: failure.message, param: failure.param });
    stream.end();
    if (failure.code === 'internal_error') request.log.error({ err: error }, 'responses stream failed');
    return;
  }

  const out = open();
  response.output.forEach((item, index) => {
    if (item.type === 'function_call') return sendCall(send, item, index);
    // Forced tool calls stream no text: what they leave (a call cut short) arrives here whole.
    if (!messageOpen) {
      openMessage();
      if (result.text) send({ type: 'response.output_text.delta', ...at, delta: result.text, logprobs: [] });
    }
    send({ type: 'response.output_text.done', ...at, text: result.text, logprobs: [] });
    send({ type: 'response.content_part.done', ...at, part: part(result.text) });
    send({ type: 'response.output_item.done', output_index: index, item });
  });
  send({ type: response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', response });
  out.end();
}

/** Generation stopped early: the client left (nothing is sent) or the server is shutting down. */
function stopped(): HearthError {
  return new HearthError('server_busy', 'Generation stopped: the client disconnected or the server is shutting down.', { retryAfter: 5 });
}

function sendCall(send: (event: StreamEvent) => void, item: Extract<OutputItem, { type: 'function_call' }>, index: number): void {
  const at = { item_id: item.id, output_index: index };
  send({ type: 'response.output_item.added', output_index: index, item: { ...item, arguments: '', status: 'in_progress' } });
  send({ type: 'response.function_call_arguments.delta', ...at, delta: item.arguments });
  send({ type: 'response.function_call_arguments.done', ...at, name: item.name, arguments: item.arguments });
  send({ type: 'response.output_item.done', output_index: index, item });
}
