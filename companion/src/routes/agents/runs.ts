import { createReadStream, existsSync, statSync } from 'node:fs';
import { basename, resolve, sep } from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AgentRun, AgentRunEventList, AgentRunList, AgentRunRequest } from '#shared/api/agents.js';
import type { AgentService } from '../../agents/service.js';
import { EVENT_PAGE, isTerminal } from '../../agents/replay.js';
import { plainMediaType } from '../../cloud/artifacts.js';
import { HearthError } from '../../errors.js';
import { openEventStream } from '../../http/sse.js';
import type { AgentsContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { type BodySchema, pathParams, prefixedId } from '../schema.js';
import { anyAgentParams } from './definitions.js';

const text = { type: 'string', maxLength: 1_000_000 };
const textPart = {
  type: 'object',
  required: ['type', 'text'],
  additionalProperties: false,
  properties: { type: { enum: ['text', 'input_text', 'output_text'] }, text },
};
/** An image among a user message's text: a data URL, or an http(s) URL where the owner allows remote images (read in agents/definitions.ts). */
const imagePart = {
  type: 'object',
  required: ['type', 'image_url'],
  additionalProperties: false,
  properties: {
    type: { const: 'image_url' },
    image_url: {
      type: 'object',
      required: ['url'],
      additionalProperties: false,
      properties: { url: { type: 'string', minLength: 1 }, detail: { enum: ['auto', 'low', 'high'] } },
    },
  },
};
/** A part: an image_url part checked as one, anything else as text (so a problem names the part's own field). */
const part = { if: { type: 'object', required: ['type'], properties: { type: { const: 'image_url' } } }, then: imagePart, else: textPart };

/** A run to start (also on the secure channel, routes/channel/agents.ts): types are checked here, meaning in companion/src/agents. */
export const runBody = {
  type: 'object',
  required: ['input'],
  additionalProperties: false,
  properties: {
    input: {
      anyOf: [
        { type: 'string', minLength: 1, maxLength: 1_000_000 },
        {
          type: 'array',
          minItems: 1,
          maxItems: 1000,
          items: {
            type: 'object',
            required: ['role', 'content'],
            additionalProperties: false,
            properties: {
              role: { enum: ['user', 'assistant'] },
              content: { anyOf: [text, { type: 'array', maxItems: 1000, items: part }] },
            },
          },
        },
      ],
    },
    conversation_id: { type: 'string', minLength: 1, maxLength: 256 },
    stream: { type: 'boolean' },
  },
} as const satisfies BodySchema<AgentRunRequest>;

export const runParams = pathParams({ run_id: prefixedId('run') });

export const artifactParams = pathParams({ run_id: prefixedId('run'), artifact_id: { type: 'string', minLength: 1, maxLength: 100 } });

export const eventsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { after: { type: 'string', pattern: '^[0-9]{1,12}$' } },
} as const;

export const runsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'string', pattern: '^[0-9]{1,4}$' }, before: { type: 'string', pattern: '^[0-9]{1,12}$' } },
} as const;

/** Comment lines keep an idle stream (a run waiting for an approval) open through proxies. */
const HEARTBEAT_MS = 15_000;

/**
 * Runs: start one (the answer waits for the end, or streams its events), read it, read or
 * follow its events, cancel it. A client that goes away stops listening; the run goes on.
 */
/** What following a run's events takes: the runs, and the server's shutdown (the channel's runs use it too). */
export interface RunEventsContext {
  agents: Pick<AgentService, 'get' | 'events' | 'follow'>;
  shutdown: AbortSignal;
}

export const runRoutes: RoutePlugin<AgentsContext, 'dispatcher' | 'agents' | 'artifacts' | 'shutdown'> = async (app, context) => {
  const { dispatcher, agents } = context;
  app.post<{ Params: { id: string }; Body: AgentRunRequest }>(
    '/agents/:id/run',
    { schema: { params: anyAgentParams, body: runBody } },
    async (request, reply): Promise<AgentRun | undefined> => {
      const started = await dispatcher.start(request.params.id, request.body);
      return answerRun(context, started, request, reply);
    },
  );

  app.get<{ Params: { id: string }; Querystring: { limit?: string; before?: string } }>(
    '/agents/:id/runs',
    { schema: { params: anyAgentParams, querystring: runsQuery } },
    async (request): Promise<AgentRunList> => {
      const limit = Math.min(100, Math.max(1, Number(request.query.limit ?? 20)));
      const before = request.query.before === undefined ? undefined : Number(request.query.before);
      const { runs, hasMore } = dispatcher.runs(request.params.id, limit, before);
      return { object: 'list', data: runs, has_more: hasMore };
    },
  );

  app.get<{ Params: { run_id: string } }>('/agents/runs/:run_id', { schema: { params: runParams } }, async (request): Promise<AgentRun> =>
    visibleRun(agents, request, request.params.run_id),
  );

  app.get<{ Params: { run_id: string }; Querystring: { after?: string } }>(
    '/agents/runs/:run_id/events',
    { schema: { params: runParams, querystring: eventsQuery } },
    async (request, reply): Promise<AgentRunEventList | undefined> => {
      const run = visibleRun(agents, request, request.params.run_id);
      return runEvents(context, run.id, request, reply);
    },
  );

  app.get<{ Params: { run_id: string; artifact_id: string } }>(
    '/agents/runs/:run_id/artifacts/:artifact_id',
    { schema: { params: artifactParams } },
    async (request, reply) => {
      const run = visibleRun(agents, request, request.params.run_id);
      const artifact = agents.artifact(run.id, request.params.artifact_id);
      const folder = resolve(context.artifacts, run.id);
      const path = resolve(folder, artifact.path.startsWith(`${run.id}/`) ? artifact.path.slice(run.id.length + 1) : '');
      // The path was written by Hearth; still, nothing outside this run's own artifacts folder is ever served.
      if (!path.startsWith(folder + sep) || !existsSync(path)) throw new HearthError('artifact_not_found', `The file of artifact "${artifact.name}" is gone.`);
      return reply
        .header('content-type', plainMediaType(artifact.media_type) ?? 'application/octet-stream')
        .header('content-length', String(statSync(path).size))
        .header('content-disposition', `attachment; filename="${basename(path)}"`)
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .send(createReadStream(path));
    },
  );

  app.post<{ Params: { run_id: string } }>('/agents/runs/:run_id/cancel', { schema: { params: runParams } }, async (request): Promise<AgentRun> => {
    const run = visibleRun(agents, request, request.params.run_id);
    return agents.cancel(run.id);
  });
};

/** The answer to a started run: the run once it ends, or its events as they come (`stream: true`). */
export function answerRun(
  context: RunEventsContext,
  started: { run: AgentRun; finished: Promise<AgentRun> },
  request: FastifyRequest<{ Body: AgentRunRequest }>,
  reply: FastifyReply,
): Promise<AgentRun> | undefined {
  if (!request.body.stream) return started.finished;
  streamRun(context, { runId: started.run.id, after: 0 }, request, reply);
  return undefined;
}

/** A run's events after `?after=N`: followed as SSE when the caller accepts it, else one JSON page. */
export function runEvents(
  context: RunEventsContext,
  runId: string,
  request: FastifyRequest<{ Querystring: { after?: string } }>,
  reply: FastifyReply,
): AgentRunEventList | undefined {
  const after = Number(request.query.after ?? 0);
  if ((request.headers.accept ?? '').includes('text/event-stream')) {
    streamRun(context, { runId, after }, request, reply);
    return undefined;
  }
  const page = context.agents.events(runId, after, EVENT_PAGE + 1);
  const data = page.slice(0, EVENT_PAGE);
  return { object: 'list', data, has_more: page.length > EVENT_PAGE, run_status: context.agents.get(runId).status };
}

/** A run this caller may see: a key scoped to another agent is told it does not exist. */
function visibleRun(agents: Pick<AgentService, 'get'>, request: FastifyRequest, runId: string): AgentRun {
  const run = agents.get(runId);
  const only = request.grant?.agent;
  if (only && run.agent_id !== only) throw new HearthError('run_not_found', `No agent run has the id "${runId}".`);
  return run;
}

/** Writes a run's events after `after` as SSE (`event:`, `id:` = sequence, `data:`), then follows it to its end. */
function streamRun(context: RunEventsContext, { runId, after }: { runId: string; after: number }, request: FastifyRequest, reply: FastifyReply): void {
  const stream = openEventStream(request, reply, context.shutdown);
  const following = { stop: () => undefined as unknown };
  let closed = false;
  const heartbeat = setInterval(() => stream.raw(': keep-alive\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    following.stop();
    stream.end();
  };
  stream.signal.addEventListener('abort', close, { once: true });
  const followed = context.agents.follow(runId, after, (event) => {
    stream.raw(`event: ${event.type}\nid: ${event.sequence}\ndata: ${JSON.stringify(event)}\n\n`);
    if (isTerminal(event)) close();
  });
  following.stop = followed.stop;
  if (closed) followed.stop();
  void followed.replayed.then(
    (live) => {
      if (!live) close();
    },
    (error: unknown) => {
      request.log.warn({ err: error, run: runId }, 'replaying the events of a run failed');
      close();
    },
  );
}
