import { randomBytes } from 'node:crypto';

/** Random ids with readable prefixes: chatcmpl-…, resp_…, call_…, msg_…, run_…, job_…. */
export function newId(prefix: 'chatcmpl-' | 'resp_' | 'call_' | 'msg_' | 'fc_' | 'run_' | 'job_' | 'quote_'): string {
  return prefix + randomBytes(12).toString('base64url');
}

export function unixSeconds(date = Date.now()): number {
  return Math.floor(date / 1000);
}
