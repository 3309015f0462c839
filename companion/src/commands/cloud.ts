import type { CloudAgentSummary, CloudLoginStart, CloudWorkspaceList, CloudWorkspaceStatus } from '#shared/api/remote.js';
import { adminCall, failure, startCommand, usage, type Answer } from './companion-client.js';
import type { CommandContext } from './context.js';

const USAGE = `Usage:
  hearth cloud list [--json]              cloud workspaces and their sign-in state
  hearth cloud login NAME [--no-wait]     sign in (a browser on this machine, or a code to enter on any device)
  hearth cloud logout NAME                forget the workspace's sign-in
  hearth cloud agents NAME [--json]       the agents the workspace publishes (cloud:NAME/AGENT in GET /agents)
Workspaces are configured in cloud_workspaces (config.yaml). Talks to the running server (found through
the data directory, or --url http://127.0.0.1:PORT). Exit codes: 0 done, 1 failed, 2 usage.`;

export { USAGE as usage };

/** `hearth cloud`: cloud workspace sign-in through the running companion. */
export async function run(argv: string[], context: CommandContext): Promise<number> {
  const started = startCommand(argv, context, USAGE, { json: { type: 'boolean' }, 'no-wait': { type: 'boolean' } }, ['list', 'login', 'logout', 'agents']);
  if (typeof started === 'number') return started;
  const { client, positionals, values } = started;
  const [action, name, extra] = positionals;
  if (extra !== undefined || (action !== 'list' && !name) || (action === 'list' && name)) {
    return usage(context, USAGE, `Incomplete or extra arguments: "cloud ${positionals.join(' ')}".`);
  }
  const path = `/admin/cloud/workspaces${name ? `/${encodeURIComponent(name)}` : ''}`;
  if (action === 'list') {
    const answer = await adminCall<CloudWorkspaceList>(client, path);
    if (!answer.ok) return failure(context, answer.body);
    if (values.json) context.stdout.write(`${JSON.stringify(answer.body.data, null, 2)}\n`);
    else if (answer.body.data.length === 0) context.stdout.write('No cloud workspaces are configured (cloud_workspaces in config.yaml).\n');
    else for (const workspace of answer.body.data) describe(context, workspace);
    return 0;
  }
  if (action === 'logout') {
    const answer = await adminCall<CloudWorkspaceStatus>(client, `${path}/logout`, { method: 'POST' });
    if (!answer.ok) return failure(context, answer.body);
    context.stdout.write(`Signed out of ${name}.\n`);
    return 0;
  }
  if (action === 'agents') {
    const answer = await adminCall<{ data: CloudAgentSummary[] }>(client, `${path}/agents`);
    if (!answer.ok) return failure(context, answer.body);
    if (values.json) context.stdout.write(`${JSON.stringify(answer.body.data, null, 2)}\n`);
    else for (const agent of answer.body.data) context.stdout.write(`${agent.id}  ${agent.streaming ? 'streaming' : 'polling  '}  ${agent.description}\n`);
    return 0;
  }
  const answer = await adminCall<CloudLoginStart>(client, `${path}/login`, { method: 'POST' });
  if (!answer.ok) return failure(context, answer.body);
  const start = answer.body;
  if (start.grant === 'device_code') {
    context.stdout.write(
      `On any device, open ${start.verification_uri} and enter the code ${start.user_code}${
        start.verification_uri_complete ? `\n(or open ${start.verification_uri_complete})` : ''
      }\n`,
    );
  } else context.stdout.write(`Open this address in a browser on this machine to sign in to "${name}":\n\n  ${start.authorization_url}\n\n`);
  if (values['no-wait']) return 0;
  context.stderr.write('Waiting for the sign-in to complete (Ctrl-C to stop waiting)...\n');
  return waitForSignIn(context, () => adminCall<CloudWorkspaceStatus>(client, path), Date.now() - 1000, Date.parse(start.expires_at));
}

async function waitForSignIn(context: CommandContext, poll: () => Promise<Answer<CloudWorkspaceStatus>>, since: number, until: number): Promise<number> {
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const answer = await poll();
    if (!answer.ok) return failure(context, answer.body);
    if (answer.body.state === 'pending') continue;
    const fresh = answer.body.signed_in_at !== null && Date.parse(answer.body.signed_in_at) >= since;
    if (answer.body.state === 'signed_in' && fresh) {
      describe(context, answer.body);
      return 0;
    }
    if (answer.body.message && !fresh) {
      describe(context, answer.body);
      return 1;
    }
  }
  context.stderr.write('The sign-in was not completed in time. Run hearth cloud login again.\n');
  return 1;
}

function describe(context: CommandContext, workspace: CloudWorkspaceStatus): void {
  const who = workspace.subject ? ` as ${workspace.subject}` : '';
  context.stdout.write(
    `${workspace.name}: ${workspace.state}${who}  workspace=${workspace.workspace_id}  issuer=${workspace.issuer}  grant=${workspace.grant}\n`,
  );
  if (workspace.message) context.stdout.write(`  ${workspace.message}\n`);
}
