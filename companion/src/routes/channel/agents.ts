import type { FastifyRequest } from 'fastify';
import { AGENT_ID_PATTERN, type AgentList, type AgentRecord, type AgentRun, type AgentRunEventList, type AgentRunRequest } from '#shared/api/agents.js';
import type { AgentSettings } from '#shared/api/config.js';
import { agentRecord } from '../../agents/definitions.js';
import { HearthError } from '../../errors.js';
import { assertGranted } from '../../http/channel-perimeter.js';
import { answerRun, eventsQuery, runBody, runEvents, runParams } from '../agents/runs.js';
import type { ChannelContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { pathParams } from '../schema.js';

/** A granted agent: one of this machine's (a device never reaches further through the channel). */
export const agentParams = pathParams({ id: { type: 'string', pattern: AGENT_ID_PATTERN } });

/**
 * The agents a paired device may use over the secure channel: those it was granted at pairing,
 * run exactly as local runs (events, approvals decided here on the host), and only its own runs
 * read or cancelled. Approvals, definitions and every other route do not exist on the channel.
 */
export const deviceAgentRoutes: RoutePlugin<ChannelContext, 'config' | 'channel' | 'agents' | 'shutdown'> = async (app, context) => {
  const { config, channel, agents } = context;
  app.get('/agents', async (request): Promise<AgentList> => {
    const granted = new Set(request.device?.agents ?? []);
    return {
      object: 'list',
      data: config()
        .agents.filter((agent) => granted.has(agent.id))
        .map(deviceView),
    };
  });

  app.post<{ Params: { id: string }; Body: AgentRunRequest }>(
    '/agents/:id/run',
    { schema: { params: agentParams, body: runBody } },
    async (request, reply): Promise<AgentRun | undefined> => {
      const device = request.device!;
      assertGranted(device, request.params.id);
      const conversation = request.body.conversation_id;
      if (conversation !== undefined && channel.devices.foreignConversation(device.id, request.params.id, conversation))
        throw new HearthError('invalid_request_error', `No conversation "${conversation}" of this device with agent "${request.params.id}".`, {
          param: 'conversation_id',
        });
      const started = await agents.start(request.params.id, request.body);
      channel.devices.claimRun(device.id, started.run.id);
      return answerRun(context, started, request, reply);
    },
  );

  app.get<{ Params: { run_id: string } }>('/agents/runs/:run_id', { schema: { params: runParams } }, async (request): Promise<AgentRun> =>
    agents.get(ownRun(channel, request, request.params.run_id)),
  );

  app.get<{ Params: { run_id: string }; Querystring: { after?: string } }>(
    '/agents/runs/:run_id/events',
    { schema: { params: runParams, querystring: eventsQuery } },
    async (request, reply): Promise<AgentRunEventList | undefined> => runEvents(context, ownRun(channel, request, request.params.run_id), request, reply),
  );

  app.post<{ Params: { run_id: string } }>('/agents/runs/:run_id/cancel', { schema: { params: runParams } }, async (request): Promise<AgentRun> =>
    agents.cancel(ownRun(channel, request, request.params.run_id)),
  );
};

/** What a device sees of an agent: its record, without the host's folder. */
function deviceView(agent: AgentSettings): AgentRecord {
  return { ...agentRecord(agent), workspace: null };
}

/** A run this device started; any other is, for the device, one that does not exist. */
function ownRun(channel: ChannelContext['channel'], request: FastifyRequest, runId: string): string {
  if (!request.device || !channel.devices.ownsRun(request.device.id, runId))
    throw new HearthError('run_not_found', `No agent run of this device has the id "${runId}".`);
  return runId;
}
