import { randomBytes } from 'node:crypto';

/** Random ids with readable prefixes: chatcmpl-…, resp_…, call_…, msg_…, run_…, job_…, dl_…, quote_…. */
export function newId(prefix: 'chatcmpl-' | 'resp_' | 'call_' | 'msg_' | 'fc_' | 'run_' | 'job_' | 'dl_' | 'quote_'): string {
  return prefix + randomBytes(12).toString('base64url');
}

export function unixSeconds(date = Date.now()): number {
  return Math.floor(date / 1000);
}

/**
 * The one rule for agent ids, wherever one is given (configuration, access keys, memory,
 * /agents/{id} and /memory/agents/{id} paths, X-Service-Agent-Id): 1-100 letters, digits, "-",
 * "_" or ".", not starting with "." (so never "." or ".."). 100 is the longest path segment the
 * router takes, so every accepted id is reachable in a URL.
 */
export const AGENT_ID_PATTERN = '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$';
export const AGENT_ID_RULE = '1-100 letters, digits, "-", "_" or ".", not starting with "."';
const agentIdPattern = new RegExp(AGENT_ID_PATTERN);

export function isAgentId(value: string): boolean {
  return agentIdPattern.test(value);
}
