import type { IncomingMessage } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HearthError } from '../errors.js';
import { explainSchemaErrors, problemAt, type SchemaError } from '../schema-messages.js';
import { noteErrorCode } from './request-metrics.js';
import type { ErrorCode } from '#shared/api/errors.js';

/**
 * How a family's errors look on the wire: the body for an error of the table (its status is the
 * table's). The OpenAI shape everywhere, unless a family speaking another protocol installs its
 * own for its routes (Anthropic's on /v1/messages).
 */
export type ErrorShape = (error: HearthError) => unknown;

const OPENAI_SHAPE: ErrorShape = (error) => error.toBody();

/**
 * Renders every error, ours or Fastify's, with the status from the table, in `shape`. Called once
 * on the app (the OpenAI shape), and again inside a family's plugin with that protocol's shape:
 * Fastify then uses it for the family's routes only, their perimeter refusals and bad bodies included.
 */
export function installErrorHandling(app: FastifyInstance, shape: ErrorShape = OPENAI_SHAPE): void {
  app.setErrorHandler(async (error: FastifyError | HearthError, request, reply) => {
    const hearth = error instanceof HearthError ? error : translate(error as FastifyError, request);
    if (hearth.code === 'internal_error') request.log.error({ err: error }, 'unexpected error');
    noteErrorCode(reply, hearth.code);
    if (hearth.retryAfter !== undefined) void reply.header('retry-after', String(hearth.retryAfter));
    // The connection closes after a refused body; a client still sending would see a broken pipe, not the 413.
    if (hearth.code === 'request_too_large') await discardBody(request.raw);
    return reply.status(hearth.status).send(shape(hearth));
  });
}

/** Bytes of a refused body read and thrown away so its client can read the answer; larger bodies are cut off. */
const DISCARD_LIMIT_BYTES = 64 * 1024 * 1024;
const DISCARD_LIMIT_MS = 10_000;

/** Reads and discards the rest of a request body, up to DISCARD_LIMIT_BYTES and DISCARD_LIMIT_MS, as mature servers do. */
function discardBody(body: IncomingMessage): Promise<void> {
  if (body.complete || body.destroyed || Number(body.headers['content-length']) > DISCARD_LIMIT_BYTES) return Promise.resolve();
  return new Promise((resolve) => {
    let read = 0;
    const finish = () => {
      clearTimeout(timer);
      body.removeListener('data', count);
      body.removeListener('end', finish);
      body.removeListener('close', finish);
      body.removeListener('error', finish);
      resolve();
    };
    const count = (chunk: Buffer) => {
      read += chunk.length;
      if (read > DISCARD_LIMIT_BYTES) finish();
    };
    const timer = setTimeout(finish, DISCARD_LIMIT_MS);
    body.on('data', count);
    body.once('end', finish);
    body.once('close', finish);
    body.once('error', finish);
    body.resume();
  });
}

function translate(error: FastifyError, request: FastifyRequest): HearthError {
  if (error.validation && error.validation.length > 0) return invalidRequest(error.validation as SchemaError[]);
  const byFastifyCode: Partial<Record<string, [ErrorCode, string?]>> = {
    FST_ERR_CTP_BODY_TOO_LARGE: ['request_too_large', tooLarge(request)],
    FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.'],
    FST_ERR_CTP_EMPTY_JSON_BODY: ['invalid_json', 'The body is empty but Content-Type is application/json. Send a JSON object.'],
    FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['invalid_request_error', 'Content-Length does not match the body.'],
  };
  const known = error.code ? byFastifyCode[error.code] : undefined;
  if (known) return new HearthError(known[0], known[1]);
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new HearthError('invalid_json', `The request body is not valid JSON: ${error.message}`);
  }
  if (error.statusCode === 405) return new HearthError('method_not_allowed');
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) return new HearthError('invalid_request_error', error.message);
  return new HearthError('internal_error', undefined, { cause: error });
}

/**
 * The 400 for a request that does not match its schema (a JSON body, params, a query, or a
 * multipart form's fields once read): the field, and what is wrong with it in words.
 */
export function invalidRequest(errors: SchemaError[]): HearthError {
  const { error: chosen, message } = explainSchemaErrors(errors);
  // A missing or unknown field is named itself (the param), so it is said plainly.
  const { path, message: said } = problemAt(chosen, message);
  const param = path || null;
  return new HearthError('invalid_request_error', `${param ?? 'body'} ${said}.`, { param });
}

/** The settings that limit request bodies, by the path they apply to (the first that matches). */
const BODY_LIMITS: [RegExp, string][] = [
  [/^\/v1\/(images|media)\//, 'server.limits.images_body_mb'],
  [/^\/memory\//, 'server.limits.memory_body_mb'],
  [/^\/mcp(\/|$)/, 'server.limits.tools_body_mb'],
  [/^\/admin\//, 'server.limits.admin_body_kb'],
  [/^\/pair$/, ''],
];

/** A 413 that names the limit and the setting that raises it. */
function tooLarge(request: FastifyRequest): string {
  const path = request.url.split('?')[0]!;
  const setting = BODY_LIMITS.find(([pattern]) => pattern.test(path))?.[1] ?? 'server.body_limit_mb';
  const limit = request.routeOptions.bodyLimit;
  const size = limit === undefined ? 'its limit' : setting.endsWith('_kb') ? `${Math.round(limit / 1024)} KB` : `${Number((limit / 1048576).toFixed(1))} MB`;
  const raise = setting ? ` To accept larger ones, raise ${setting} in config.yaml and restart Hearth.` : '';
  return `The request body is larger than ${path} accepts (at most ${size}).${raise}`;
}

/**
 * Errors the router meets before any route or hook runs (a path segment over maxParamLength, a
 * malformed URL), in the same OpenAI shape as every other error (Fastify's `frameworkErrors`).
 */
export function frameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const hearth =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new HearthError('uri_too_long')
      : new HearthError('invalid_request_error', error.code === 'FST_ERR_BAD_URL' ? 'The request path is not a valid URL.' : error.message);
  void reply.status(hearth.status).send(hearth.toBody());
}
