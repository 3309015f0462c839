/** Request-body and query schemas of the /memory routes: types are checked here, meaning in companion/src/memory. */
import { AGENT_ID_PATTERN, ISO_DATE_PATTERN } from '../../memory/validate.js';

const agentId = { type: 'string', pattern: AGENT_ID_PATTERN };
const conversationId = { type: 'string', minLength: 1, maxLength: 256 };
const sessionDate = { type: 'string', pattern: ISO_DATE_PATTERN };
const projectId = { type: 'string', minLength: 1, maxLength: 256 };
const query = { type: 'string', minLength: 1, maxLength: 4000 };

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
} as const;

export const delegatedBody = {
  type: 'object',
  additionalProperties: false,
  required: ['agent_id', 'conversation_id', 'task'],
  properties: {
    agent_id: agentId,
    conversation_id: conversationId,
    task: { type: 'string', minLength: 1 },
    result: { type: 'string' },
    session_date: sessionDate,
    project_id: projectId,
  },
} as const;

export const flushBody = {
  type: 'object',
  additionalProperties: false,
  required: ['agent_id'],
  properties: { agent_id: agentId, conversation_id: conversationId },
} as const;

export const searchBody = {
  type: 'object',
  additionalProperties: false,
  required: ['agent_id', 'query', 'scope'],
  properties: { agent_id: agentId, query, scope: { enum: ['pinned', 'episodes', 'transcript'] }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
} as const;

export const contextBody = {
  type: 'object',
  additionalProperties: false,
  required: ['agent_id', 'query'],
  properties: { agent_id: agentId, query, budget_tokens: { type: 'integer', minimum: 1 } },
} as const;

export const consolidateBody = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: { agent_id: agentId },
} as const;

export const agentParams = { type: 'object', required: ['agent_id'], properties: { agent_id: agentId } } as const;
export const factParams = {
  type: 'object',
  required: ['agent_id', 'id'],
  properties: { agent_id: agentId, id: { type: 'string', pattern: '^(fact_)?[0-9]{1,15}$' } },
} as const;
export const identityParams = {
  type: 'object',
  required: ['agent_id', 'key'],
  properties: { agent_id: agentId, key: { type: 'string', minLength: 1, maxLength: 64 } },
} as const;

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

export const pinBody = { type: 'object', additionalProperties: false, required: ['text'], properties: { text: { type: 'string', minLength: 1 } } } as const;
export const factUpdateBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { text: { type: 'string', minLength: 1 }, status: { enum: ['candidate', 'pinned'] } },
} as const;
export const identityBody = {
  type: 'object',
  additionalProperties: false,
  required: ['value'],
  properties: { value: { type: 'string', minLength: 1 } },
} as const;
