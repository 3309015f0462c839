import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * Fastify logs two JSON lines per request at info; Hearth logs one line per request at debug
 * (`HEARTH_LOG_LEVEL=debug`). Failed requests still log at error. The query string is left
 * out: it may carry an OAuth code.
 */
export class RequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (error) return super.requestCompleted(error, request, reply, metadata);
    request.log.debug(`${request.method} ${pathOf(request)} ${reply.statusCode} ${reply.elapsedTime.toFixed(1)} ms`);
  }

  /** A client that stops reading a file (a navigation, a cancelled download) is no news either. */
  override streamError(error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (error.code !== 'ERR_STREAM_PREMATURE_CLOSE') return super.streamError(error, request, reply, metadata);
    request.log.debug(`${request.method} ${pathOf(request)}: the client stopped reading`);
  }

  override routeNotFound(request: FastifyRequest): void {
    request.log.debug(`${request.method} ${pathOf(request)}: no such route`);
  }
}

function pathOf(request: FastifyRequest): string {
  return request.url.split('?')[0]!;
}
