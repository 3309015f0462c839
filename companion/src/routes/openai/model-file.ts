import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { HearthError } from '../../errors.js';
import type { OpenaiContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';

/** `bytes=a-b`, `bytes=a-` or `bytes=-n` against a file of `size` bytes; null when unsatisfiable. */
export function parseRange(header: string, size: number): { start: number; end: number } | null | 'ignore' {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  // Several ranges or another unit: answer the whole file, as RFC 9110 allows.
  if (!match || (match[1] === '' && match[2] === '')) return 'ignore';
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return null;
    start = Math.max(size - suffix, 0);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start >= size || start > end) return null;
  return { start, end };
}

/**
 * Serves a local model's GGUF file so the PWA can keep a copy and run it in the browser
 * (wllama). `HEAD` gives the size before a download; `Range` lets a client resume. Provider
 * models have no file here and answer 404 like unknown ones.
 */
export const modelFileRoutes: RoutePlugin<OpenaiContext, 'catalog'> = async (app, { catalog }) => {
  app.get<{ Params: { id: string } }>('/v1/models/:id/file', async (request, reply) => {
    const target = await catalog.resolve(request.params.id).catch((error: unknown) => {
      if (error instanceof HearthError && error.code === 'model_load_failed') return null;
      throw error;
    });
    if (!target || target.kind !== 'local') {
      throw new HearthError(
        'model_not_found',
        `"${request.params.id}" is not a local model file Hearth can serve. List the local models with GET /v1/models.`,
        { param: 'id' },
      );
    }
    const { info } = target;
    const size = (await stat(info.path)).size;
    if (size !== info.sizeBytes) {
      throw new HearthError('invalid_request_error', `${info.id} is split into several files; only single-file models can be copied to the browser.`, {
        param: 'id',
      });
    }
    reply
      .header('accept-ranges', 'bytes')
      .header('content-type', 'application/octet-stream')
      .header('content-disposition', `attachment; filename="${basename(info.path).replace(/[^\w.-]/g, '_')}"`)
      .header('cache-control', 'no-store')
      .header('x-hearth-model-id', info.id);
    const range = request.headers.range ? parseRange(request.headers.range, size) : 'ignore';
    if (range === null) {
      reply.header('content-range', `bytes */${size}`).removeHeader('content-disposition').removeHeader('content-type');
      throw new HearthError('range_not_satisfiable', `The range ${request.headers.range} is outside the file (${size} bytes).`, { param: 'range' });
    }
    if (range === 'ignore') return send(reply.header('content-length', String(size)), request.method, info.path, { start: 0, end: size - 1 });
    return send(
      reply
        .status(206)
        .header('content-range', `bytes ${range.start}-${range.end}/${size}`)
        .header('content-length', String(range.end - range.start + 1)),
      request.method,
      info.path,
      range,
    );
  });
};

function send(reply: FastifyReply, method: string, path: string, { start, end }: { start: number; end: number }): FastifyReply {
  // Fastify answers HEAD through this GET handler; an empty stream keeps our Content-Length
  // (a string body would make Fastify set it to the string's length) and opens no file.
  if (method === 'HEAD' || end < start) return reply.send(Readable.from([]));
  return reply.send(createReadStream(path, { start, end }));
}
