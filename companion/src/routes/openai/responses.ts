import type { FastifyReply, FastifyRequest } from 'fastify';
import { HearthError } from '../../errors.js';
import { localGenerator } from '../../generation/generate.js';
import { newId, unixSeconds } from '../../ids.js';
import { clientGone, openEventStream, type EventStream } from '../../http/sse.js';
import type { LocalModel } from '../../models/registry.js';
import { RESPONSES_FIELDS, type GenerationRequest, type GenerationResult } from '../../inference/types.js';
import type { OpenaiContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { type BodySchema, nonEmptyString, nullableNumber, pathParams } from '../schema.js';
import { functionName } from '../schema-fragments.js';
import type {
  InputItem,
  OutputItem,
  OutputTextPart,
  ReasoningTextPart,
  ResponseCreateRequest,
  ResponseDeleted,
  ResponseObject,
  ResponseStreamEvent,
} from '#shared/api/responses.js';
import { attributionOf, lastUserText, recordAttribution, type Attribution } from './attribution.js';
import { forwardToProvider } from './forward.js';
import { effortSchema, reasoningOf } from './reasoning.js';
import { finishedResponse, historyOf, inputItemsOf, outputFormatOf, outputItemsOf, responseShell, toolModeOf, toolsOf } from './responses-convert.js';

const when = (type: string, required: string[]) => ({
  if: { type: 'object', properties: { type: { const: type } }, required: ['type'] },
  then: { type: 'object', required },
});

/** A string, else an array checked item by item (if/else rather than anyOf, so errors name the failing field). */
const stringOr = (schema: object) => ({ if: { type: 'string' }, else: schema });
const textPart = { type: { type: 'string' }, text: { type: 'string' } };
/** An input_image part's fields: an image URL (or a file id, refused) and a detail. */
const imagePart = { image_url: { type: 'string' }, file_id: { type: 'string' }, detail: { enum: ['low', 'high', 'auto', 'original'] } };
const textOrParts = (properties: object) => stringOr({ type: 'array', items: { type: 'object', required: ['type'], properties } });

const inputItem = {
  type: 'object',
  properties: {
    type: { type: 'string' },
    id: { type: 'string' },
    status: { type: 'string' },
    role: { enum: ['user', 'assistant', 'system', 'developer'] },
    // Assistant messages from an earlier response's output carry output_text parts with annotations;
    // a user message's input_image parts carry an image URL (or a file id, refused) and a detail.
    content: textOrParts({ ...textPart, annotations: { type: 'array' }, ...imagePart }),
    call_id: nonEmptyString(),
    name: { type: 'string' },
    arguments: { type: 'string' },
    // A function's output: text, or text and input_image parts (an image URL, or a file id, refused).
    output: textOrParts({ ...textPart, ...imagePart }),
    // A reasoning item of an earlier response, sent back: accepted and dropped.
    summary: { type: 'array' },
    encrypted_content: { type: ['string', 'null'] },
  },
  allOf: [
    // A message may omit its type.
    { if: { type: 'object', properties: { type: { const: 'message' } } }, then: { type: 'object', required: ['role', 'content'] } },
    when('function_call', ['call_id', 'name', 'arguments']),
    when('function_call_output', ['call_id', 'output']),
  ],
};

const tool = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string' },
    name: functionName,
    description: { type: ['string', 'null'] },
    parameters: { type: ['object', 'null'] },
    strict: { type: ['boolean', 'null'] },
  },
  allOf: [when('function', ['name'])],
};

const textFormat = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: ['text', 'json_object', 'json_schema'] },
    name: { type: 'string' },
    schema: { type: 'object' },
    description: { type: 'string' },
    strict: { type: ['boolean', 'null'] },
  },
  allOf: [when('json_schema', ['name', 'schema'])],
};

/**
 * POST /v1/responses. Item, part, tool and tool_choice types are left
 * open so that provider models receive what they support; responses-convert.ts refuses, by
 * field, what local models cannot do.
 */
export const responseCreateBody = {
  type: 'object',
  required: ['model', 'input'],
  properties: {
    model: nonEmptyString(),
    input: stringOr({ type: 'array', items: inputItem }),
    instructions: { type: ['string', 'null'] },
    tools: { type: 'array', items: tool },
    tool_choice: {
      if: { type: 'string' },
      then: { enum: ['auto', 'none', 'required'] },
      else: { type: 'object', required: ['type'], properties: { type: { type: 'string' }, name: { type: 'string' } }, allOf: [when('function', ['name'])] },
    },
    text: { type: ['object', 'null'], properties: { format: textFormat } },
    max_output_tokens: { type: ['integer', 'null'], minimum: 1 },
    temperature: nullableNumber(0, 2),
    top_p: nullableNumber(0, 1),
    stream: { type: ['boolean', 'null'] },
    store: { type: ['boolean', 'null'] },
    previous_response_id: { type: ['string', 'null'] },
    metadata: { type: ['object', 'null'], maxProperties: 16, additionalProperties: { type: 'string', maxLength: 512 } },
    parallel_tool_calls: { type: ['boolean', 'null'] },
    // OpenAI's limit; both tie requests to a conversation (a provider pool's affinity).
    user: { type: 'string', maxLength: 256 },
    prompt_cache_key: { type: 'string', maxLength: 256 },
    reasoning: { type: ['object', 'null'], properties: { effort: effortSchema, summary: { enum: ['auto', 'concise', 'detailed', null] } } },
  },
} as const satisfies BodySchema<ResponseCreateRequest>;

export const responseIdParams = pathParams({ id: nonEmptyString() });

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

type Context = Pick<OpenaiContext, 'config' | 'catalog' | 'generation' | 'providers' | 'responses' | 'agents' | 'shutdown'>;

export const responsesRoutes: RoutePlugin<OpenaiContext, keyof Context> = async (app, context) => {
  const { responses } = context;
  app.post<{ Body: ResponseCreateRequest }>('/v1/responses', { schema: { body: responseCreateBody } }, async (request, reply) => {
    const body = request.body;
    const attribution = attributionOf(context, request, reply, lastUserText(inputItemsOf(body.input)));
    const target = await context.catalog.resolve(body.model);
    if (target.kind === 'provider') {
      const observe = (text: string) => recordAttribution(context, request, attribution, text);
      return forwardToProvider(context, { path: '/responses', modelId: target.id, body: body as unknown as Record<string, unknown>, observe }, request, reply);
    }
    const turn = turnOf(context, { info: target.info, body, attribution }, clientGone(request, reply, context.shutdown));
    return body.stream ? streamLocal(context, turn, request, reply) : answerLocal(context, turn, request);
  });

  app.get<{ Params: { id: string } }>('/v1/responses/:id', { schema: { params: responseIdParams } }, async (request) => {
    const response = responses.get(request.params.id);
    if (!response) throw notFound(request.params.id);
    return response;
  });

  app.delete<{ Params: { id: string } }>('/v1/responses/:id', { schema: { params: responseIdParams } }, async (request): Promise<ResponseDeleted> => {
    if (!responses.delete(request.params.id)) throw notFound(request.params.id);
    return { id: request.params.id, object: 'response', deleted: true };
  });
};

function notFound(id: string): HearthError {
  return new HearthError('response_not_found', `No stored response has the id "${id}".`);
}

function turnOf(context: Pick<Context, 'responses'>, asked: Pick<Turn, 'info' | 'body' | 'attribution'>, signal: AbortSignal): Turn {
  const { info, body, attribution } = asked;
  const input = inputItemsOf(body.input);
  const previous = body.previous_response_id ? context.responses.conversation(body.previous_response_id) : [];
  const tools = toolsOf(body.tools);
  const generation: GenerationRequest = {
    model: info.id,
    history: historyOf(body.instructions, previous, input),
    maxTokens: body.max_output_tokens ?? undefined,
    reasoning: reasoningOf(body.reasoning?.effort, undefined, body.max_output_tokens ?? undefined),
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
function settle(context: Pick<Context, 'responses'>, turn: Turn, result: GenerationResult, ids: { message: string; reasoning: string }): ResponseObject {
  const response = finishedResponse(turn.shell, result, outputItemsOf(result, ids.message, ids.reasoning));
  if (turn.body.store !== false) context.responses.save(response, turn.input);
  return response;
}

async function answerLocal(context: Context, turn: Turn, request: FastifyRequest): Promise<ResponseObject> {
  const result = await localGenerator(context.generation, turn.info).run(turn.generation);
  if (turn.generation.signal.aborted) throw stopped();
  const response = settle(context, turn, result, { message: newId('msg_'), reasoning: newId('rs_') });
  recordAttribution(context, request, turn.attribution, result.text);
  return response;
}

/**
 * Streams the protocol's typed events. The stream opens at the first generated text or thought (or
 * at the end when there is none), so failures before generation stay plain HTTP errors. A model's
 * thought is a reasoning item before the message: output_item.added, content_part.added (a
 * reasoning_text part, which the official client's accumulator needs before the deltas),
 * reasoning_text.delta …, reasoning_text.done, content_part.done, output_item.done.
 */
async function streamLocal(context: Context, turn: Turn, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const ids = { message: newId('msg_'), reasoning: newId('rs_') };
  const part = (text: string): OutputTextPart => ({ type: 'output_text', text, annotations: [] });
  const thoughtPart = (text: string): ReasoningTextPart => ({ type: 'reasoning_text', text });
  let stream: EventStream | undefined;
  let sequence = 0;
  let messageOpen = false;
  /** The reasoning item: open while the thought streams, done once the message (or the end) follows. */
  const thought = { open: false, done: false, text: '' };
  const at = () => ({ item_id: ids.message, output_index: thought.open ? 1 : 0, content_index: 0 });
  const thoughtAt = { item_id: ids.reasoning, output_index: 0, content_index: 0 };
  const send = (event: StreamEvent) => stream!.event(event.type, { ...event, sequence_number: sequence++ });
  const open = (): EventStream => {
    if (stream) return stream;
    stream = openEventStream(request, reply, context.shutdown);
    send({ type: 'response.created', response: turn.shell });
    send({ type: 'response.in_progress', response: turn.shell });
    return stream;
  };
  const closeThought = (item?: OutputItem) => {
    if (!thought.open || thought.done) return;
    thought.done = true;
    send({ type: 'response.reasoning_text.done', ...thoughtAt, text: thought.text });
    send({ type: 'response.content_part.done', ...thoughtAt, part: thoughtPart(thought.text) });
    send({
      type: 'response.output_item.done',
      output_index: 0,
      item: item ?? { type: 'reasoning', id: ids.reasoning, summary: [], content: [thoughtPart(thought.text)], status: 'completed' },
    });
  };
  const openMessage = () => {
    open();
    if (messageOpen) return;
    closeThought();
    messageOpen = true;
    send({
      type: 'response.output_item.added',
      output_index: at().output_index,
      item: { type: 'message', id: ids.message, status: 'in_progress', role: 'assistant', content: [] },
    });
    send({ type: 'response.content_part.added', ...at(), part: part('') });
  };
  turn.generation.onReasoning = (delta) => {
    // A thought after the answer began has no item of its own in the stream; the final response carries it.
    if (!delta || messageOpen) return;
    open();
    if (!thought.open) {
      thought.open = true;
      send({
        type: 'response.output_item.added',
        output_index: 0,
        item: { type: 'reasoning', id: ids.reasoning, summary: [], content: [], status: 'in_progress' },
      });
      send({ type: 'response.content_part.added', ...thoughtAt, part: thoughtPart('') });
    }
    thought.text += delta;
    send({ type: 'response.reasoning_text.delta', ...thoughtAt, delta });
  };
  turn.generation.onText = (delta) => {
    if (!delta) return;
    openMessage();
    send({ type: 'response.output_text.delta', ...at(), delta, logprobs: [] });
  };

  let result: GenerationResult;
  let response: ResponseObject;
  try {
    result = await localGenerator(context.generation, turn.info).run(turn.generation);
    if (turn.generation.signal.aborted) throw stopped();
    response = settle(context, turn, result, ids);
    recordAttribution(context, request, turn.attribution, result.text);
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
    if (item.type === 'reasoning') {
      if (thought.open) return closeThought(item);
      // A thought that did not stream before the answer: whole, as a finished item.
      send({ type: 'response.output_item.added', output_index: index, item });
      return send({ type: 'response.output_item.done', output_index: index, item });
    }
    // Forced tool calls stream no text: what they leave (a call cut short) arrives here whole.
    if (!messageOpen) {
      openMessage();
      if (result.text) send({ type: 'response.output_text.delta', ...at(), delta: result.text, logprobs: [] });
    }
    send({ type: 'response.output_text.done', ...at(), text: result.text, logprobs: [] });
    send({ type: 'response.content_part.done', ...at(), part: part(result.text) });
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
