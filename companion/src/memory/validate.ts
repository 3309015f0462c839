import { HearthError } from '../errors.js';
import { AGENT_ID_PATTERN, AGENT_ID_RULE, isAgentId } from '../ids.js';

/** Any well-formed agent id is its own memory namespace; the rule is the one for every agent id. */
export { AGENT_ID_PATTERN };

export function checkAgentId(value: string, param = 'agent_id'): string {
  if (!isAgentId(value)) throw new HearthError('invalid_request_error', `${param} must be ${AGENT_ID_RULE}.`, { param });
  return value;
}

/** ISO 8601 date (`2023-05-08`) or date-time (`2023-05-08T13:56`, seconds, fraction and zone optional). */
export const ISO_DATE_PATTERN = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:?\\d{2})?)?$';
const isoDate = new RegExp(ISO_DATE_PATTERN);

/**
 * Epoch milliseconds of an ISO 8601 date or date-time; a date-time without a zone is read as UTC.
 * Throws a 400 naming `param` for anything else, including impossible dates like 2023-02-30.
 */
export function parseSessionDate(value: string, param = 'session_date'): number {
  const problem = () =>
    new HearthError('invalid_request_error', `${param} must be an ISO 8601 date (2023-05-08) or date-time (2023-05-08T13:56:00Z); got "${value}".`, { param });
  if (!isoDate.test(value)) throw problem();
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCFullYear() !== year || calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) throw problem();
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/.test(value) && value.includes('T');
  const zoned = value.length === 10 ? `${value}T00:00:00Z` : hasZone ? value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2') : `${value}Z`;
  const time = Date.parse(zoned);
  if (!Number.isFinite(time)) throw problem();
  const clock = /T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(value);
  if (clock && (Number(clock[1]) > 23 || Number(clock[2]) > 59 || Number(clock[3] ?? 0) > 59)) throw problem();
  return time;
}
