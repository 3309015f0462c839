import type { FastifyReply, FastifyRequest } from 'fastify';

/** A server-sent-event stream on a hijacked reply; headers set by earlier hooks are kept. */
export interface EventStream {
  /** Aborted when the client goes away or the server shuts down. */
  signal: AbortSignal;
  data(payload: unknown): void;
  event(name: string, payload: unknown): void;
  raw(text: string): void;
  end(): void;
}

export function openEventStream(request: FastifyRequest, reply: FastifyReply, shutdown: AbortSignal): EventStream {
  const signal = clientGone(request, reply, shutdown);
  const headers = {
    ...reply.getHeaders(),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  };
  reply.hijack();
  reply.raw.writeHead(200, headers as Record<string, string>);
  reply.raw.flushHeaders();
  const write = (text: string) => {
    if (!reply.raw.writableEnded && !reply.raw.destroyed) reply.raw.write(text);
  };
  return {
    signal,
    data: (payload) => write(`data: ${JSON.stringify(payload)}\n\n`),
    event: (name, payload) => write(`event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`),
    raw: write,
    end: () => {
      if (!reply.raw.writableEnded) reply.raw.end();
    },
  };
}

/**
 * A signal that fires when the client disconnects before the answer is complete, or when the
 * server shuts down. Generation listens to it, so a dropped client stops work at once.
 */
export function clientGone(request: FastifyRequest, reply: FastifyReply, shutdown: AbortSignal): AbortSignal {
  const controller = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'));
  };
  reply.raw.once('close', onClose);
  request.raw.once('aborted', onClose);
  return AbortSignal.any([controller.signal, shutdown]);
}
