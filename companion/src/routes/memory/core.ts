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
import { consolidateBody, contextBody, delegatedBody, flushBody, ingestBody, searchBody } from './schemas.js';
import type { MemoryContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';

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
