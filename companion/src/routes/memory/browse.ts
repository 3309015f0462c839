import type { MemoryFactPin, MemoryFactUpdate, MemoryIdentityValue, MemoryList } from '#shared/api/memory.js';
import { assertAgentScope, pageLimit, recordNumber, scopedAgent } from './scope.js';
import { agentId, agentParams, conversationId } from './fields.js';
import type { MemoryContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { type BodySchema, nonEmptyString, pathParams, requiredBody, shortName } from '../schema.js';

export const factParams = pathParams({ agent_id: agentId, id: { type: 'string', pattern: '^(fact_)?[0-9]{1,15}$' } });

export const identityParams = pathParams({ agent_id: agentId, key: shortName });

export const pageQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'string', pattern: '^[0-9]{1,4}$' },
    before: { type: 'string', pattern: '^([a-z]+_)?[0-9]{1,15}$' },
    conversation_id: conversationId,
    status: { enum: ['candidate', 'pinned'] },
  },
} as const;

export const pinBody = requiredBody({ text: nonEmptyString() }) satisfies BodySchema<MemoryFactPin>;

export const factUpdateBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { text: nonEmptyString(), status: { enum: ['candidate', 'pinned'] } },
} as const satisfies BodySchema<MemoryFactUpdate>;

export const identityBody = requiredBody({ value: nonEmptyString() }) satisfies BodySchema<MemoryIdentityValue>;

type AgentRoute = { Params: { agent_id: string } };
type Page = { limit?: string; before?: string; conversation_id?: string; status?: 'candidate' | 'pinned' };

/** Browsing and editing one agent's memory (the PWA's memory pages use these). */
export const memoryBrowseRoutes: RoutePlugin<MemoryContext, 'memory'> = async (app, { memory }) => {
  app.get('/memory/agents', async (request) => ({ agents: memory.browse.agents(scopedAgent(request)) }));

  app.addHook('preHandler', async (request) => {
    const agent = (request.params as { agent_id?: string } | undefined)?.agent_id;
    if (agent !== undefined) assertAgentScope(request, agent);
  });

  app.get<AgentRoute>('/memory/agents/:agent_id', { schema: { params: agentParams } }, async (request) => memory.browse.status(request.params.agent_id));

  /** A list read a page at a time: `limit` and `before` come from the query; `next_before` names the last item of a full page. */
  const pagedList = <T extends { id: string }>(path: string, list: (agent: string, page: { before: number | undefined; limit: number }, query: Page) => T[]) =>
    app.get<AgentRoute & { Querystring: Page }>(path, { schema: { params: agentParams, querystring: pageQuery } }, async (request): Promise<MemoryList<T>> => {
      const limit = pageLimit(request.query.limit);
      const before = request.query.before === undefined ? undefined : recordNumber(request.query.before);
      const items = list(request.params.agent_id, { before, limit }, request.query);
      return { items, next_before: items.length === limit ? items.at(-1)!.id : null };
    });

  pagedList('/memory/agents/:agent_id/transcript', (agent, page, query) => memory.browse.turns(agent, { conversationId: query.conversation_id, ...page }));
  pagedList('/memory/agents/:agent_id/episodes', (agent, { before, limit }) => memory.browse.episodes(agent, before, limit));
  pagedList('/memory/agents/:agent_id/facts', (agent, { before, limit }, query) => memory.browse.facts(agent, query.status, before, limit));

  app.get<AgentRoute>('/memory/agents/:agent_id/identity', { schema: { params: agentParams } }, async (request) => ({
    items: memory.browse.identity(request.params.agent_id),
  }));

  app.get<AgentRoute & { Querystring: Page }>(
    '/memory/agents/:agent_id/entities',
    { schema: { params: agentParams, querystring: pageQuery } },
    async (request) => ({
      items: memory.browse.entities(request.params.agent_id, pageLimit(request.query.limit, 100)),
    }),
  );

  app.post<AgentRoute & { Body: MemoryFactPin }>(
    '/memory/agents/:agent_id/facts',
    { schema: { params: agentParams, body: pinBody } },
    async (request, reply) => {
      const pinned = memory.browse.pin(request.params.agent_id, request.body.text);
      void reply.status(pinned.merged ? 200 : 201);
      return pinned;
    },
  );

  app.patch<{ Params: { agent_id: string; id: string }; Body: MemoryFactUpdate }>(
    '/memory/agents/:agent_id/facts/:id',
    { schema: { params: factParams, body: factUpdateBody } },
    async (request) => {
      return memory.browse.updateFact(request.params.agent_id, recordNumber(request.params.id), request.body);
    },
  );

  app.delete<{ Params: { agent_id: string; id: string } }>('/memory/agents/:agent_id/facts/:id', { schema: { params: factParams } }, async (request) => {
    memory.browse.deleteFact(request.params.agent_id, recordNumber(request.params.id));
    return { id: `fact_${recordNumber(request.params.id)}`, deleted: true };
  });

  app.put<{ Params: { agent_id: string; key: string }; Body: MemoryIdentityValue }>(
    '/memory/agents/:agent_id/identity/:key',
    { schema: { params: identityParams, body: identityBody } },
    async (request) => {
      return memory.browse.setIdentity(request.params.agent_id, request.params.key, request.body.value);
    },
  );

  app.delete<{ Params: { agent_id: string; key: string } }>(
    '/memory/agents/:agent_id/identity/:key',
    { schema: { params: identityParams } },
    async (request) => {
      memory.browse.deleteIdentity(request.params.agent_id, request.params.key);
      return { key: request.params.key, deleted: true };
    },
  );
};
