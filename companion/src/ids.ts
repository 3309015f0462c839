import { AGENT_ID_PATTERN, AGENT_ID_RULE } from '#shared/api/agents.js';
import { randomBytes } from 'node:crypto';

/** Random ids with readable prefixes: chatcmpl-…, cmpl-…, resp_…, call_…, msg_…, rs_…, run_…, conv_…, appr_…, job_…, dl_…, quote_…. */
export function newId(
  prefix: 'chatcmpl-' | 'cmpl-' | 'resp_' | 'call_' | 'msg_' | 'fc_' | 'rs_' | 'run_' | 'conv_' | 'appr_' | 'job_' | 'dl_' | 'quote_',
): string {
  return prefix + randomBytes(12).toString('base64url');
}

export function unixSeconds(date = Date.now()): number {
  return Math.floor(date / 1000);
}

/** The one rule for agent ids (shared with the app, which checks ids as they are typed). */
export { AGENT_ID_PATTERN, AGENT_ID_RULE };
const agentIdPattern = new RegExp(AGENT_ID_PATTERN);

export function isAgentId(value: string): boolean {
  return agentIdPattern.test(value);
}
