import type {
  MemoryConsolidateRequest,
  MemoryContextRequest,
  MemoryContextResponse,
  MemoryDelegatedRequest,
  MemoryFlushRequest,
  MemoryIngestRequest,
  MemoryIngestResponse,
  MemorySearchRequest,
  MemorySearchResponse,
} from '#shared/api/memory.js';
import { assertAgentScope, scopedAgent } from './scope.js';
import { agentId, conversationId, projectId, query, sessionDate } from './fields.js';
import type { MemoryContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { nonEmptyString, type BodySchema } from '../schema.js';

export const ingestBody = {
  type: 'object',
  additionalProperties: false,
  required: ['agent_id', 'conversation_id', 'turns'],
  properties: {
    agent_id: agentId,
    conversation_id: conversationId,
    turns: {
      type: 'array',
      minItems: 1,
      maxItems: 10000,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['user'],
        properties: { user: { type: 'string' }, assistant: { type: 'string' } },
      },
    },
    session_date: sessionDate,
    skip_extraction: { type: 'boolean' },
    project_id: projectId,
  },
} as const satisfies BodySchema<MemoryIngestRequest>;

export const delegatedBody = {
  type: 'object',
  additionalProperties: false,
  required: ['agent_id', 'conversation_id', 'task'],
  properties: {
    agent_id: agentId,
    conversation_id: conversationId,
    task: nonEmptyString(),
    result: { type: 'string' },
    session_date: sessionDate,
    project_id: projectId,
  },
} as const satisfies BodySchema<MemoryDelegatedRequest>;

export const flushBody = {
  type: 'object',
  additionalProperties: false,
  required: ['agent_id'],
  properties: { agent_id: agentId, conversation_id: conversationId },
} as const satisfies BodySchema<MemoryFlushRequest>;

export const searchBody = {
  type: 'object',
  additionalProperties: false,
  required: ['agent_id', 'query', 'scope'],
  properties: { agent_id: agentId, query, scope: { enum: ['pinned', 'episodes', 'transcript'] }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
} as const satisfies BodySchema<MemorySearchRequest>;

export const contextBody = {
  type: 'object',
  additionalProperties: false,
  required: ['agent_id', 'query'],
  properties: { agent_id: agentId, query, budget_tokens: { type: 'integer', minimum: 1 } },
} as const satisfies BodySchema<MemoryContextRequest>;

export const consolidateBody = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: { agent_id: agentId },
} as const satisfies BodySchema<MemoryConsolidateRequest | null>;

/** Ingestion, flush, search, budgeted recall and on-demand consolidation. */
export const memoryCoreRoutes: RoutePlugin<MemoryContext, 'memory'> = async (app, { memory }) => {
  app.post<{ Body: MemoryIngestRequest }>('/memory/ingest', { schema: { body: ingestBody } }, async (request): Promise<MemoryIngestResponse> => {
    const body = request.body;
    assertAgentScope(request, body.agent_id);
    const result = await memory.ingest({
      agentId: body.agent_id,
      conversationId: body.conversation_id,
      turns: body.turns.map((turn) => ({ user: turn.user, assistant: turn.assistant ?? '' })),
      sessionDate: body.session_date,
      skipExtraction: body.skip_extraction ?? false,
      projectId: body.project_id,
    });
    return { status: 'ok', turns_ingested: result.turnsIngested, extraction: result.extraction };
  });

  app.post<{ Body: MemoryDelegatedRequest }>('/memory/delegated', { schema: { body: delegatedBody } }, async (request) => {
    const body = request.body;
    assertAgentScope(request, body.agent_id);
    memory.recordDelegated({
      agentId: body.agent_id,
      conversationId: body.conversation_id,
      user: body.task,
      assistant: body.result,
      sessionDate: body.session_date,
      projectId: body.project_id,
    });
    return { status: 'ok', turns_ingested: 1 };
  });

  app.post<{ Body: MemoryFlushRequest }>('/memory/flush', { schema: { body: flushBody } }, async (request) => {
    assertAgentScope(request, request.body.agent_id);
    return memory.flush(request.body.agent_id, request.body.conversation_id);
  });

  app.post<{ Body: MemorySearchRequest }>('/memory/search', { schema: { body: searchBody } }, async (request): Promise<MemorySearchResponse> => {
    const body = request.body;
    assertAgentScope(request, body.agent_id);
    return { items: await memory.search(body.agent_id, body.query, body.scope, body.limit ?? 10) };
  });

  app.post<{ Body: MemoryContextRequest }>('/memory/context', { schema: { body: contextBody } }, async (request): Promise<MemoryContextResponse> => {
    const body = request.body;
    assertAgentScope(request, body.agent_id);
    return memory.recall(body.agent_id, body.query, body.budget_tokens);
  });

  app.post<{ Body: MemoryConsolidateRequest | null }>('/memory/consolidate', { schema: { body: consolidateBody } }, async (request) => {
    // A caller scoped to one agent consolidates only that agent, whatever it asked for.
    const asked = request.body?.agent_id;
    if (asked !== undefined) assertAgentScope(request, asked);
    return memory.consolidate(asked ?? scopedAgent(request));
  });
};
