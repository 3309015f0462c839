import type { DeviceList, DeviceRecord, PairingCode } from '#shared/api/remote.js';
import { adminCall, failure, startCommand, usage } from './companion-client.js';
import type { CommandContext } from './context.js';
import { command } from '../invocation.js';

const USAGE = `Usage:
  hearth devices pair [--agents a,b] [--json]   a one-time pairing code (single use, 5 minutes, 5 tries) and this host's fingerprint
  hearth devices list [--json]                  paired devices, their agents and open connections
  hearth devices revoke DEVICE_ID               revoke a device; its open connections close at once
Devices reach this host over the secure channel (server.remote). A device may use only the agents
granted when it paired (--agents; none by default). Talks to the running server (found through the
data directory, or --url http://127.0.0.1:PORT). Exit codes: 0 done, 1 failed, 2 usage.`;

export { USAGE as usage };

/** `hearth devices`: the host side of device pairing. */
export async function run(argv: string[], context: CommandContext): Promise<number> {
  const started = startCommand(argv, context, USAGE, { agents: { type: 'string', multiple: true }, json: { type: 'boolean' } }, ['pair', 'list', 'revoke']);
  if (typeof started === 'number') return started;
  const { client, positionals, values } = started;
  const [action, id] = positionals;
  if (action === 'pair' && !id) {
    const agents = ((values.agents as string[] | undefined) ?? []).flatMap((entry) => entry.split(',')).filter(Boolean);
    const answer = await adminCall<PairingCode>(client, '/admin/devices/pair', { method: 'POST', body: { agents } });
    if (!answer.ok) return failure(context, answer.body);
    const pairing = answer.body;
    if (values.json) {
      const { code, fingerprint, url, expires_at } = pairing;
      context.stdout.write(`${JSON.stringify({ code, fingerprint, url, expires_at, agents: pairing.agents })}\n`);
      return 0;
    }
    context.stdout.write(
      [
        `Pairing code:      ${pairing.code}   (single use, valid until ${new Date(pairing.expires_at).toLocaleTimeString()}, 5 tries)`,
        `Host fingerprint:  ${pairing.fingerprint}   (SHA-256 of this host's certificate)`,
        `Grants:            ${pairing.agents.length ? pairing.agents.join(', ') : 'no agents (the device can pair, but list and run nothing)'}`,
        '',
        // How Hearth is installed over there is not known here: both forms, each as it runs.
        'On the other machine, with its Hearth running, in its Hearth folder:',
        `  npm run hearth -- remote add NAME ${pairing.url} --code ${pairing.code} --fingerprint ${pairing.fingerprint}`,
        '(where Hearth is installed as a command: hearth remote add … with the same arguments)',
        '',
      ].join('\n'),
    );
    return 0;
  }
  if (action === 'list' && !id) {
    const answer = await adminCall<DeviceList>(client, '/admin/devices');
    if (!answer.ok) return failure(context, answer.body);
    if (values.json) context.stdout.write(`${JSON.stringify(answer.body.data, null, 2)}\n`);
    else if (answer.body.data.length === 0) context.stdout.write(`No paired devices. Pair one with: ${command('devices pair --agents AGENT')}\n`);
    else for (const device of answer.body.data) context.stdout.write(describe(device));
    return 0;
  }
  if (action === 'revoke' && id) {
    const answer = await adminCall<DeviceRecord>(client, `/admin/devices/${encodeURIComponent(id)}`, { method: 'DELETE' });
    if (!answer.ok) return failure(context, answer.body);
    context.stdout.write(`Revoked ${answer.body.id} "${answer.body.name}"; its connections are closed.\n`);
    return 0;
  }
  return usage(context, USAGE, `Incomplete or extra arguments: "devices ${positionals.join(' ')}".`);
}

function describe(device: DeviceRecord): string {
  const state = device.revoked_at ? 'revoked' : 'active';
  return `${device.id}  ${state.padEnd(7)}  ${device.name}  agents=${device.agents.join(',') || '(none)'}  connections=${device.connections}  last-seen=${device.last_seen_at ?? 'never'}\n`;
}
