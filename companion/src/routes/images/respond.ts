import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ImageResponse, ImageResponseFormat, ImageStreamEvent } from '#shared/api/images.js';
import { clientGone, openEventStream, type EventStream } from '../../http/sse.js';
import type { SubmitOptions } from '../../images/jobs/job-manager.js';
import type { ImagesContext } from '../contexts.js';
import { ownerOf } from './viewer.js';

/** What a request asks of its job: how it wants the answer, and how to start the job. */
export interface JobRequest {
  stream: boolean;
  responseFormat?: ImageResponseFormat;
  start: (options: SubmitOptions) => Promise<StartedJob> | StartedJob;
}

type StartedJob = { id: string; done: Promise<ImageResponse> };

/**
 * Starts an image job and answers with its result, or (stream: true) with its events as
 * server-sent events. A client that goes away cancels the job.
 */
export async function respondWithJob(
  context: Pick<ImagesContext, 'shutdown'>,
  wants: JobRequest,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<ImageResponse | undefined> {
  const signal = clientGone(request, reply, context.shutdown);
  // Events before the stream opens (the job is queued at once) wait here.
  const opened: { stream?: EventStream } = {};
  const early: ImageStreamEvent[] = [];
  const send = (event: ImageStreamEvent) => opened.stream!.event(event.type, event);
  const job = await wants.start({
    signal,
    previews: wants.stream,
    responseFormat: wants.responseFormat,
    origin: `${request.protocol}://${request.headers.host ?? '127.0.0.1'}`,
    owner: ownerOf(request),
    onEvent: wants.stream ? (event) => (opened.stream ? send(event) : early.push(event)) : undefined,
  });
  if (!wants.stream) return job.done;
  const stream = (opened.stream = openEventStream(request, reply, context.shutdown));
  for (const event of early) send(event);
  await job.done.catch(() => undefined);
  stream.end();
  return undefined;
}
