import type { FastifyReply, FastifyRequest } from 'fastify';
import { HearthError } from '../../errors.js';
import { clientGone, openEventStream, type EventStream } from '../../http/sse.js';
import type { GenerationResult } from '../../inference/types.js';

/** How one protocol words a streamed generation's text. */
export interface TextEvents {
  /** The `data:` event of one piece of text. */
  piece(delta: string): unknown;
  /** The events that close a finished generation (its finish reason, its counts). */
  end(result: GenerationResult): unknown[];
  /** Written after them as it is (`data: [DONE]\n\n`). */
  tail?: string;
}

/**
 * Runs a generation whose text streams as server-sent events. The stream opens with the first
 * piece, so what fails before it (a bad suffix, a prompt too long, a full queue) is a plain HTTP
 * error; a failure after it is an error event, and a server shutting down says so before the end.
 */
export async function streamGeneration(
  shutdown: AbortSignal,
  request: FastifyRequest,
  reply: FastifyReply,
  run: (signal: AbortSignal, onText: (delta: string) => void) => Promise<GenerationResult>,
  events: TextEvents,
): Promise<void> {
  const signal = clientGone(request, reply, shutdown);
  let stream: EventStream | undefined;
  const open = () => (stream ??= openEventStream(request, reply, signal));
  let result: GenerationResult;
  try {
    result = await run(signal, (delta) => open().data(events.piece(delta)));
  } catch (error) {
    if (!stream) throw error;
    return streamFailed(stream, request, error);
  }
  const out = open();
  if (signal.aborted) return endCut(out, shutdown);
  for (const event of events.end(result)) out.data(event);
  if (events.tail) out.raw(events.tail);
  out.end();
}

/** A generation failed after its stream opened: the failure is its last event, and it is logged. */
export function streamFailed(stream: EventStream, request: FastifyRequest, error: unknown): void {
  stream.data(error instanceof HearthError ? error.toBody() : new HearthError('internal_error').toBody());
  stream.end();
  request.log.error({ err: error }, 'stream failed');
}

/**
 * Ends a stream whose generation was stopped: the client left (no one reads it) or the server is
 * shutting down, which is said before the end.
 */
export function endCut(out: EventStream, shutdown: AbortSignal): void {
  if (shutdown.aborted) out.data(new HearthError('server_busy', 'The server is shutting down; this reply was cut short.', { retryAfter: 5 }).toBody());
  out.end();
}
