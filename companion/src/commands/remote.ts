import type { RemoteHostList, RemoteHostStatus } from '#shared/api/remote.js';
import { adminCall, failure, startCommand, usage } from './companion-client.js';
import type { CommandContext } from './context.js';
import { command } from '../invocation.js';

const USAGE = `Usage:
  hearth remote add NAME https://HOST:PORT --code CODE --fingerprint FP   pair with another machine's Hearth
  hearth remote list [--json]                                            paired hosts, their state and granted agents
  hearth remote remove NAME                                              forget a host (its owner revokes the device there)
Run "hearth devices pair" on the host first: it shows the code, the fingerprint and the address.
The host's granted agents then appear in GET /agents as NAME/AGENT. Talks to the running server
(found through the data directory, or --url http://127.0.0.1:PORT). Exit codes: 0 done, 1 failed, 2 usage.`;

export { USAGE as usage };

/** `hearth remote`: the device side of pairing, through the running companion. */
export async function run(argv: string[], context: CommandContext): Promise<number> {
  const started = startCommand(argv, context, USAGE, { code: { type: 'string' }, fingerprint: { type: 'string' }, json: { type: 'boolean' } }, [
    'add',
    'list',
    'remove',
  ]);
  if (typeof started === 'number') return started;
  const { client, positionals, values } = started;
  const [action, name, url] = positionals;
  if (action === 'add' && name && url && positionals.length === 3) {
    if (!values.code || !values.fingerprint)
      return usage(context, USAGE, '--code and --fingerprint are required (hearth devices pair shows both on the host).');
    const answer = await adminCall<RemoteHostStatus>(client, '/admin/remote-hosts', {
      method: 'POST',
      body: { name, url, code: values.code, fingerprint: values.fingerprint },
    });
    if (!answer.ok) return failure(context, answer.body);
    const host = answer.body;
    context.stdout.write(
      `Paired with ${host.name} (${host.url}) as device ${host.device_id}.\nPinned host certificate: ${host.fingerprint}\nGranted agents: ${
        host.agents.length ? host.agents.map((agent) => `${host.name}/${agent}`).join(', ') : 'none yet (the host grants them at pairing)'
      }\n`,
    );
    return 0;
  }
  if (action === 'list' && !name) {
    const answer = await adminCall<RemoteHostList>(client, '/admin/remote-hosts');
    if (!answer.ok) return failure(context, answer.body);
    if (values.json) context.stdout.write(`${JSON.stringify(answer.body.data, null, 2)}\n`);
    else if (answer.body.data.length === 0)
      context.stdout.write(`No remote hosts. Pair with one: ${command('remote add NAME URL --code CODE --fingerprint FP')}\n`);
    else for (const host of answer.body.data) describe(context, host);
    return answer.body.data.every((host) => host.state === 'connected') ? 0 : 1;
  }
  if (action === 'remove' && name && !url) {
    const answer = await adminCall(client, `/admin/remote-hosts/${encodeURIComponent(name)}`, { method: 'DELETE' });
    if (!answer.ok) return failure(context, answer.body);
    context.stdout.write(`Removed ${name} and its device credential.\n`);
    return 0;
  }
  return usage(context, USAGE, `Incomplete or extra arguments: "remote ${positionals.join(' ')}".`);
}

function describe(context: CommandContext, host: RemoteHostStatus): void {
  context.stdout.write(`${host.name}: ${host.state}  ${host.url}  device=${host.device_id ?? '?'}  agents=${host.agents.join(',') || '(none)'}\n`);
  if (host.message) context.stdout.write(`  ${host.message}\n`);
}
