/** Request schemas of the agents family: types are checked here, meaning in companion/src/agents. */
import { AGENT_ID_PATTERN } from '#shared/api/agents.js';
import { ANY_AGENT_ID_PATTERN } from '../../access/agent-target.js';

const text = { type: 'string', maxLength: 1_000_000 };
const textPart = {
  type: 'object',
  required: ['type', 'text'],
  additionalProperties: false,
  properties: { type: { enum: ['text', 'input_text', 'output_text'] }, text },
};

export const agentParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: AGENT_ID_PATTERN } },
} as const;

/** An agent to run: a local id, `<host>/<agent>` on a paired host, or `cloud:<workspace>/<agent>`. */
export const anyAgentParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: ANY_AGENT_ID_PATTERN } },
} as const;

export const runParams = {
  type: 'object',
  required: ['run_id'],
  properties: { run_id: { type: 'string', pattern: '^run_[A-Za-z0-9_-]{1,64}$' } },
} as const;

export const artifactParams = {
  type: 'object',
  required: ['run_id', 'artifact_id'],
  properties: { run_id: runParams.properties.run_id, artifact_id: { type: 'string', minLength: 1, maxLength: 100 } },
} as const;

export const approvalParams = {
  type: 'object',
  required: ['approval_id'],
  properties: { approval_id: { type: 'string', pattern: '^appr_[A-Za-z0-9_-]{1,64}$' } },
} as const;

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
              content: { anyOf: [text, { type: 'array', maxItems: 1000, items: textPart }] },
            },
          },
        },
      ],
    },
    conversation_id: { type: 'string', minLength: 1, maxLength: 256 },
    stream: { type: 'boolean' },
  },
} as const;

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

export const decisionBody = {
  type: 'object',
  required: ['decision'],
  additionalProperties: false,
  properties: { decision: { enum: ['approve', 'deny'] }, reason: { type: 'string', maxLength: 2000 } },
} as const;
