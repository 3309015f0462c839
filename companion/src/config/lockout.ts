import type { ConfigDocument } from '#shared/api/config.js';
import type { ConfigProblem } from '#shared/api/admin-config.js';
import { isLoopbackBind } from '../access/hosts.js';
import { command } from '../invocation.js';

/**
 * Requiring access keys while none is active would shut out every program that uses the API,
 * the app's own chat included, with the key to get back in only a terminal away: refused when a
 * change turns the requirement on. A requirement already in force is left alone (revoking the
 * last key is the keys' business, not the configuration's). Listening beyond loopback has its own,
 * stricter rule in the plan (a key first), so it is not said twice.
 */
export function lockoutProblems(before: ConfigDocument, after: ConfigDocument, activeKeys: number): ConfigProblem[] {
  if (!after.server.auth.required || before.server.auth.required || activeKeys > 0 || !isLoopbackBind(after.server.host)) return [];
  return [
    {
      path: 'server.auth.required',
      message: `cannot be turned on while no access key exists: every program would be refused, this app too. Create a key first (in the app, or ${command('keys create')}), then turn it on`,
    },
  ];
}
