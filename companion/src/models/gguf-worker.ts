/**
 * The GGUF header thread (a worker_threads worker, started by gguf-thread.ts): reads headers with
 * gguf-header.ts, one file at a time. Whatever goes wrong in here (memory running out, a bug)
 * ends this thread, never the companion, and the companion marks only that file.
 */
import { parentPort } from 'node:worker_threads';
import { readGgufHeader } from './gguf-header.js';
import type { GgufReply, GgufRequest } from './gguf-thread.js';

const port = parentPort!;

port.on('message', (request: GgufRequest) => {
  readGgufHeader(request.path).then(
    (metadata) => port.postMessage({ id: request.id, metadata } satisfies GgufReply),
    (error: unknown) => port.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) } satisfies GgufReply),
  );
});
