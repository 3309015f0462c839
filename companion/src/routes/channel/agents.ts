import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AgentList, AgentRecord, AgentRun, AgentRunEventList, AgentRunRequest } from '#shared/api/agents.js';
import { agentRecord } from '../../agents/definitions.js';
import { HearthError } from '../../errors.js';
import { assertGranted } from '../../http/channel-perimeter.js';
import type { Services } from '../../services.js';
import { answerRun, runEvents } from '../agents/runs.js';
import { agentParams, eventsQuery, runBody, runParams } from '../agents/schemas.js';
import type { RouteOptions } from '../plugin.js';

/**
 * The agents a paired device may use over the secure channel: those it was granted at pairing,
 * run exactly as local runs (events, approvals decided here on the host), and only its own runs
 * read or cancelled. Approvals, definitions and every other route do not exist on the channel.
 */
export async function deviceAgentRoutes(app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.get('/agents', async (request): Promise<AgentList> => {
    const granted = new Set(request.device?.agents ?? []);
    return { object: 'list', data: services.config.agents.filter((agent) => granted.has(agent.id)).map(deviceView) };
  });

  app.post<{ Params: { id: string }; Body: AgentRunRequest }>(
    '/agents/:id/run',
    { schema: { params: agentParams, body: runBody } },
    async (request, reply): Promise<AgentRun | undefined> => {
      const device = request.device!;
      assertGranted(device, request.params.id);
      const conversation = request.body.conversation_id;
      if (conversation !== undefined && services.channel.devices.foreignConversation(device.id, request.params.id, conversation))
        throw new HearthError('invalid_request_error', `No conversation "${conversation}" of this device with agent "${request.params.id}".`, {
          param: 'conversation_id',
        });
      const started = await services.agents.start(request.params.id, request.body);
      services.channel.devices.claimRun(device.id, started.run.id);
      return answerRun(services, started, request, reply);
    },
  );

  app.get<{ Params: { run_id: string } }>('/agents/runs/:run_id', { schema: { params: runParams } }, async (request): Promise<AgentRun> =>
    services.agents.get(ownRun(services, request, request.params.run_id)),
  );

  app.get<{ Params: { run_id: string }; Querystring: { after?: string } }>(
    '/agents/runs/:run_id/events',
    { schema: { params: runParams, querystring: eventsQuery } },
    async (request, reply): Promise<AgentRunEventList | undefined> => runEvents(services, ownRun(services, request, request.params.run_id), request, reply),
  );

  app.post<{ Params: { run_id: string } }>('/agents/runs/:run_id/cancel', { schema: { params: runParams } }, async (request): Promise<AgentRun> =>
    services.agents.cancel(ownRun(services, request, request.params.run_id)),
  );
}

/** What a device sees of an agent: its record, without the host's folder. */
function deviceView(agent: Services['config']['agents'][number]): AgentRecord {
  return { ...agentRecord(agent), workspace: null };
}

/** A run this device started; any other is, for the device, one that does not exist. */
function ownRun(services: Services, request: FastifyRequest, runId: string): string {
  if (!request.device || !services.channel.devices.ownsRun(request.device.id, runId))
    throw new HearthError('run_not_found', `No agent run of this device has the id "${runId}".`);
  return runId;
}
