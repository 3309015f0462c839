/** Field schemas several /memory route modules share: types are checked here, meaning in companion/src/memory. */
import { AGENT_ID_PATTERN, ISO_DATE_PATTERN } from '../../memory/validate.js';
import { pathParams } from '../schema.js';

export const agentId = { type: 'string', pattern: AGENT_ID_PATTERN };
export const conversationId = { type: 'string', minLength: 1, maxLength: 256 };
export const sessionDate = { type: 'string', pattern: ISO_DATE_PATTERN };
export const projectId = { type: 'string', minLength: 1, maxLength: 256 };
export const query = { type: 'string', minLength: 1, maxLength: 4000 };

export const agentParams = pathParams({ agent_id: agentId });
