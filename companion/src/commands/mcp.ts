import type { McpLoginStart, McpServiceList, McpServiceStatus } from '#shared/api/bridge.js';
import { adminClient, type AdminClient } from './admin-client.js';
import { parseCommandArgs, UsageError } from './arguments.js';
import { takeDataDir } from './data-dir-option.js';
import type { CommandContext } from './context.js';

export const usage = `Usage:
  hearth mcp status [NAME] [--json]     state of each MCP service, the failing layer, its tools
  hearth mcp reconnect NAME             drop and re-open a service's connection, then show its state
  hearth mcp login NAME [--no-wait]     OAuth sign-in: prints the address to open in a browser on this machine
Talks to the running server (found through the data directory, or --url http://127.0.0.1:PORT).
Exit codes: 0 done (status: every enabled service connected), 1 failed, 2 usage.`;

/** `hearth mcp`: the loopback MCP admin routes with readable output. */
export async function run(argv: string[], context: CommandContext): Promise<number> {
  const { dataDir, rest } = takeDataDir(argv, context.env);
  const { values, positionals } = parseCommandArgs({
    args: rest,
    allowPositionals: true,
    options: { json: { type: 'boolean' }, url: { type: 'string' }, 'no-wait': { type: 'boolean' } },
  });
  const [action, name] = positionals;
  if (!action) throw new UsageError('Say what to do.');
  const client = adminClient(dataDir, values.url);
  if ('problem' in client) {
    context.stderr.write(`${client.problem}\n`);
    return 1;
  }
  const request = (url: string, method = 'GET') => call(client, url, method);
  const path = (suffix = '') => `/admin/mcp/services${name ? `/${encodeURIComponent(name)}` : ''}${suffix}`;
  if (action === 'status') {
    const answer = await request(path());
    if (!answer.ok) return failure(context, answer.body);
    const services = name ? [answer.body as McpServiceStatus] : (answer.body as McpServiceList).services;
    if (values.json) context.stdout.write(`${JSON.stringify(name ? services[0] : { services }, null, 2)}\n`);
    else if (services.length === 0) context.stdout.write('No MCP services are configured (mcp_services in config.yaml).\n');
    else for (const service of services) describe(context, service);
    return services.every((service) => !service.enabled || service.state === 'connected') ? 0 : 1;
  }
  if (action === 'reconnect' && name) {
    const answer = await request(path('/reconnect'), 'POST');
    if (!answer.ok) return failure(context, answer.body);
    describe(context, answer.body as McpServiceStatus);
    return (answer.body as McpServiceStatus).state === 'connected' ? 0 : 1;
  }
  if (action === 'login' && name) {
    const answer = await request(path('/login'), 'POST');
    if (!answer.ok) return failure(context, answer.body);
    const start = answer.body as McpLoginStart;
    context.stdout.write(`Open this address in a browser on this machine to sign in to "${name}":\n\n  ${start.authorization_url}\n\n`);
    if (values['no-wait']) return 0;
    context.stderr.write('Waiting for the sign-in to complete (Ctrl-C to stop waiting)...\n');
    const since = Date.now();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const status = await request(path());
      const service = status.body as McpServiceStatus;
      if (status.ok && service.auth.signed_in && Date.parse(service.since) >= since - 1000 && service.state !== 'connecting') {
        describe(context, service);
        return service.state === 'connected' ? 0 : 1;
      }
    }
  }
  throw new UsageError(`Unknown or incomplete command "mcp ${positionals.join(' ')}".`);
}

function describe(context: CommandContext, service: McpServiceStatus): void {
  const where = service.protocol ? ` via ${service.protocol}` : '';
  const layer = service.layer ? ` [${service.layer}]` : '';
  const auth =
    service.auth.type === 'oauth'
      ? ` (oauth: ${service.auth.signed_in ? 'signed in' : 'not signed in'})`
      : service.auth.type !== 'none'
        ? ` (auth: ${service.auth.type})`
        : '';
  context.stdout.write(`${service.name}: ${service.state}${layer}${where}${auth}${service.enabled ? '' : ' (disabled)'}\n`);
  if (service.message) context.stdout.write(`  ${service.message}\n`);
  if (service.next_retry_at) context.stdout.write(`  Next attempt at ${service.next_retry_at} (attempt ${service.attempts + 1}).\n`);
  for (const warning of service.warnings) context.stdout.write(`  warning: ${warning}\n`);
  if (service.tools.length > 0) {
    const exposed = service.tools.filter((tool) => tool.exposed).length;
    context.stdout.write(`  ${service.tools.length} tool(s), ${exposed} shown to external clients (expose: ${service.expose}):\n`);
    for (const tool of service.tools)
      context.stdout.write(`    ${tool.name.padEnd(40)} ${tool.class.padEnd(7)} ${tool.exposed ? 'external' : 'agents only'}\n`);
  }
  if (service.last_call_error)
    context.stdout.write(`  last failed call: ${service.last_call_error.tool} [${service.last_call_error.layer}] ${service.last_call_error.message}\n`);
}

async function call(client: AdminClient, path: string, method: string): Promise<{ ok: boolean; body: unknown }> {
  const response = await client.fetch(path, { method });
  return { ok: response.ok, body: await response.json() };
}

function failure(context: CommandContext, body: unknown): number {
  const error = (body as { error?: { message: string } }).error;
  context.stderr.write(`${error?.message ?? 'The server answered with an unexpected body.'}\n`);
  return 1;
}
