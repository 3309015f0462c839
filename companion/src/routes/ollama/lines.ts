import type { FastifyReply } from 'fastify';

/** An NDJSON answer (Ollama's streaming): one JSON object per line, on a hijacked reply. */
export interface LineStream {
  line(payload: unknown): void;
  end(): void;
}

/** Opens the stream; headers set by earlier hooks (CORS) are kept. */
export function openLines(reply: FastifyReply): LineStream {
  const headers = { ...reply.getHeaders(), 'content-type': 'application/x-ndjson', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };
  reply.hijack();
  reply.raw.writeHead(200, headers as Record<string, string>);
  reply.raw.flushHeaders();
  return {
    line: (payload) => {
      if (!reply.raw.writableEnded && !reply.raw.destroyed) reply.raw.write(`${JSON.stringify(payload)}\n`);
    },
    end: () => {
      if (!reply.raw.writableEnded) reply.raw.end();
    },
  };
}
