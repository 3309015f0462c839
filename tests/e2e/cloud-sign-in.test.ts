import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { AgentList, AgentRun, AgentRunList } from '#shared/api/agents.js';
import type { CloudAgentSummary, CloudWorkspaceStatus } from '#shared/api/remote.js';
import { startCloudFixture, enterDeviceCode, type CloudFixture } from '../fixtures/cloud/workspace.js';
import { browse } from '../fixtures/mcp/oauth-service.js';
import { parseEvents } from '../helpers/agents.js';
import { runHearth } from '../helpers/hearth-cli.js';
import { waitFor } from '../helpers/mcp.js';
import { newDataDir, startServer, type RunningServer } from '../helpers/server.js';

/*
 * Cloud workspace sign-in against a real OpenID provider (oidc-provider) and real A2A servers
 * (@a2a-js/sdk): authorization code with PKCE on the companion's loopback redirect, the device
 * authorization grant, agent cards read with the A2A SDK, refresh before expiry, a revoked
 * sign-in, and tokens of another workspace refused on both sides.
 */

let cloud: CloudFixture;
let server: RunningServer;

function workspace(name: string, id: string, extra: Record<string, unknown>) {
  return { name, workspace_id: id, issuer: cloud.issuer, client_id: 'hearth', scopes: ['openid', 'offline_access', 'agents'], ...extra };
}

beforeAll(async () => {
  cloud = await startCloudFixture();
  const dataDir = await newDataDir(false);
  writeFileSync(
    join(dataDir, 'config.yaml'),
    stringify({
      version: 1,
      cloud_workspaces: [
        workspace('acme', 'acme', { directory: cloud.workspaces.acme.directory }),
        workspace('globex', 'globex', { directory: cloud.workspaces.globex.directory }),
        workspace('handheld', 'acme', { grant: 'device_code', agent_cards: [cloud.workspaces.acme.cards.summarizer] }),
        // Says it is acme, but its directory is globex's: acme's token must be refused there.
        workspace('misdirected', 'acme', { directory: cloud.workspaces.globex.directory }),
      ],
    }),
  );
  server = await startServer({ dataDir, withModel: false, env: { HEARTH_LOG_LEVEL: 'info' } });
});

afterAll(async () => {
  await server?.stop('SIGKILL');
  await cloud?.close();
  if (server) rmSync(server.dataDir, { recursive: true, force: true });
});

async function status(name: string): Promise<CloudWorkspaceStatus> {
  return (await (await fetch(`${server.url}/admin/cloud/workspaces/${name}`)).json()) as CloudWorkspaceStatus;
}

async function agents(name: string): Promise<{ status: number; body: { data?: CloudAgentSummary[]; error?: { code: string; message: string } } }> {
  const response = await fetch(`${server.url}/admin/cloud/workspaces/${name}/agents`);
  return { status: response.status, body: (await response.json()) as never };
}

/** Runs `hearth cloud login NAME --no-wait` and completes the browser side as the fixture's current account. */
async function browserSignIn(name: string): Promise<string> {
  const cli = await runHearth(['cloud', 'login', name, '--no-wait', '--data-dir', server.dataDir]);
  expect(cli.code).toBe(0);
  const url = /https?:\/\/\S+/.exec(cli.stdout)![0];
  expect(new URL(url).searchParams.get('code_challenge_method')).toBe('S256');
  expect(new URL(url).searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/admin\/cloud\/oauth\/callback$/);
  const page = await browse(url, new URL(server.url).origin);
  return page.body;
}

function secrets(): Record<string, string> {
  return JSON.parse(readFileSync(join(server.dataDir, 'secrets.json'), 'utf8')) as Record<string, string>;
}

describe('cloud workspace sign-in', () => {
  it('before sign-in, the workspace says how to sign in', async () => {
    expect(await status('acme')).toMatchObject({ state: 'signed_out', subject: null });
    const listed = await agents('acme');
    expect(listed.status).toBe(409);
    expect(listed.body.error).toMatchObject({ code: 'cloud_sign_in_required' });
    expect(listed.body.error!.message).toMatch(/hearth(?: --)? cloud login acme/);
  });

  it('signs in with authorization code + PKCE on the loopback redirect, bound to the account and workspace', async () => {
    cloud.account = 'alice';
    // Tokens that expire within the refresh margin: every use refreshes first.
    cloud.accessTokenSeconds = 30;
    const page = await browserSignIn('acme');
    expect(page).toContain('Signed in to acme');
    expect(await status('acme')).toMatchObject({ state: 'signed_in', subject: 'alice', workspace_id: 'acme' });
    const record = JSON.parse(secrets().CLOUD_SIGNIN_ACME!) as Record<string, string>;
    expect(record).toMatchObject({ issuer: cloud.issuer, workspace_id: 'acme', subject: 'alice', client_id: 'hearth' });
    const exported = await (await fetch(`${server.url}/admin/config/export`)).text();
    expect(exported).not.toContain(record.access_token);
  });

  it('lists the published agents from their A2A cards, refreshing the token before it expires', async () => {
    const refreshesBefore = cloud.grants.refresh_token ?? 0;
    const signedIn = (JSON.parse(secrets().CLOUD_SIGNIN_ACME!) as { access_token: string }).access_token;
    const listed = await agents('acme');
    expect(listed.status).toBe(200);
    expect(listed.body.data!.map((agent) => [agent.id, agent.streaming])).toEqual([
      ['cloud:acme/writer', true],
      ['cloud:acme/summarizer', false],
      ['cloud:acme/slow-worker', true],
    ]);
    expect(cloud.grants.refresh_token ?? 0).toBeGreaterThan(refreshesBefore);
    // The directory saw a refreshed token, never the one the sign-in returned (it was about to expire).
    expect(cloud.workspaces.acme.accepted.length).toBeGreaterThan(0);
    expect(cloud.workspaces.acme.accepted).not.toContain(signedIn);
  });

  it('lists the published agents in GET /agents and runs them through the agents run route', async () => {
    const listed = (await (await fetch(`${server.url}/agents`)).json()) as AgentList;
    expect(listed.data.filter((agent) => agent.source === 'cloud').map((agent) => [agent.id, agent.name])).toEqual([
      ['cloud:acme/writer', 'Writer'],
      ['cloud:acme/summarizer', 'Summarizer'],
      ['cloud:acme/slow-worker', 'Slow Worker'],
    ]);
    const run = (agent: string, body: Record<string, unknown>) =>
      fetch(`${server.url}/agents/${encodeURIComponent(agent)}/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    // Streaming: artifacts' text as deltas, each artifact stored and announced, the task's end as the run's.
    const streamed = parseEvents(await (await run('cloud:acme/writer', { input: 'tides', stream: true })).text());
    const types = streamed.map((event) => event.event);
    expect(types[0]).toBe('run.created');
    expect(types.at(-1)).toBe('run.completed');
    const artifacts = streamed.flatMap((event) => (event.data.type === 'artifact.created' ? [event.data.artifact] : []));
    expect(artifacts.map((artifact) => artifact.name)).toEqual(['draft.md', 'draft.md', 'draft.md', 'report.bin']);
    const done = (streamed.at(-1)!.data as { run: AgentRun }).run;
    expect(done).toMatchObject({ agent_id: 'cloud:acme/writer', status: 'completed' });
    expect(done.output_text).toContain('You asked: tides');
    expect(readFileSync(join(server.dataDir, 'artifacts', artifacts[0]!.path), 'utf8')).toBe('# Draft\nYou asked: tides\nThe end.\n');
    // Clients fetch an artifact through the run, as a download in its latest form.
    const download = await fetch(`${server.url}/agents/runs/${done.id}/artifacts/${encodeURIComponent(artifacts[0]!.artifact_id)}`);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe('# Draft\nYou asked: tides\nThe end.\n');
    expect(download.headers.get('content-type')).toContain(artifacts.at(-2)!.media_type);
    expect(download.headers.get('content-disposition')).toBe('attachment; filename="draft.md"');
    expect(download.headers.get('x-content-type-options')).toBe('nosniff');
    const missing = await fetch(`${server.url}/agents/runs/${done.id}/artifacts/nope`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('artifact_not_found');

    // Polling (the card does not stream), answered as one run object.
    const polled = (await (await run('cloud:acme/summarizer', { input: 'the news' })).json()) as AgentRun;
    expect(polled).toMatchObject({ status: 'completed' });
    expect(polled.output_text).toContain('Summary: the news');

    // Cancel sends the A2A cancel; the run ends cancelled.
    const slow = run('cloud:acme/slow-worker', { input: 'forever', stream: true });
    await waitFor(() => cloud.workspaces.acme.executors.slow.started.length > 0, 'the slow task');
    const started = cloud.workspaces.acme.executors.slow.started[0];
    const [recent] = ((await (await fetch(`${server.url}/agents/${encodeURIComponent('cloud:acme/slow-worker')}/runs`)).json()) as AgentRunList).data;
    const cancelled = (await (await fetch(`${server.url}/agents/runs/${recent!.id}/cancel`, { method: 'POST' })).json()) as AgentRun;
    expect(cancelled.status).toBe('cancelled');
    expect(cloud.workspaces.acme.executors.slow.cancelRequests).toContain(started);
    expect(parseEvents(await (await slow).text()).at(-1)!.event).toBe('run.cancelled');
  });

  it('refuses a sign-in whose account belongs to another workspace, and keeps nothing', async () => {
    cloud.account = 'alice';
    const page = await browserSignIn('globex');
    expect(page).toMatch(/belongs to workspace &#34;acme&#34;, not &#34;globex&#34;/);
    expect(await status('globex')).toMatchObject({ state: 'signed_out' });
    expect(secrets().CLOUD_SIGNIN_GLOBEX).toBeUndefined();
    cloud.account = 'bob';
    expect(await browserSignIn('globex')).toContain('Signed in to globex');
    expect((await agents('globex')).body.data!.map((agent) => agent.id)).toContain('cloud:globex/writer');
  });

  it('refuses a stored token bound to another workspace on use, and a workspace server refuses a foreign token', async () => {
    // A sign-in record of acme stored for globex (as if copied): checked on use, never sent.
    const all = secrets();
    const acceptedBefore = cloud.workspaces.globex.accepted.length;
    writeFileSync(join(server.dataDir, 'secrets.json'), JSON.stringify({ ...all, CLOUD_SIGNIN_GLOBEX: all.CLOUD_SIGNIN_ACME }), { mode: 0o600 });
    const copied = await agents('globex');
    expect(copied.status).toBe(403);
    expect(copied.body.error).toMatchObject({ code: 'cloud_workspace_mismatch' });
    expect(copied.body.error!.message).toMatch(/bound to workspace "acme".*not to "globex"/);
    expect((await status('globex')).state).toBe('mismatch');
    expect(cloud.workspaces.globex.accepted.length).toBe(acceptedBefore);

    // Acme's real sign-in sent to globex's directory: the workspace answers 401, Hearth refreshes once, then says so.
    cloud.account = 'alice';
    expect(await browserSignIn('misdirected')).toContain('Signed in to misdirected');
    const refusedBefore = cloud.workspaces.globex.refused;
    const misdirected = await agents('misdirected');
    expect(misdirected.status).toBe(409);
    expect(misdirected.body.error!.message).toMatch(/refused the sign-in \(401\) even after a refresh/);
    expect(cloud.workspaces.globex.refused).toBe(refusedBefore + 2);
  });

  it('signs in with the device authorization grant when configured', async () => {
    cloud.account = 'alice';
    const cli = await runHearth(['cloud', 'login', 'handheld', '--no-wait', '--data-dir', server.dataDir]);
    expect(cli.code).toBe(0);
    const [, uri, code] = /open (\S+) and enter the code (\S+)/.exec(cli.stdout)!;
    expect((await status('handheld')).state).toBe('pending');
    await enterDeviceCode(uri!, code!);
    await waitFor(async () => (await status('handheld')).state === 'signed_in', 'the device grant to complete', 30_000);
    expect(await status('handheld')).toMatchObject({ subject: 'alice', workspace_id: 'acme' });
    expect((await agents('handheld')).body.data!.map((agent) => agent.id)).toEqual(['cloud:handheld/summarizer']);
  });

  it('a revoked sign-in says so and asks to sign in again', async () => {
    await cloud.revoke('alice');
    const listed = await agents('acme');
    expect(listed.status).toBe(409);
    expect(listed.body.error!.message).toMatch(/revoked or has expired at the issuer\. Sign in again with: (?:npm run )?hearth(?: --)? cloud login acme/);
    expect(await status('acme')).toMatchObject({ state: 'revoked' });
    const cli = await runHearth(['cloud', 'list', '--data-dir', server.dataDir]);
    expect(cli.stdout).toMatch(/acme: revoked as alice/);
    expect((await runHearth(['cloud', 'logout', 'acme', '--data-dir', server.dataDir])).code).toBe(0);
    expect(await status('acme')).toMatchObject({ state: 'signed_out', subject: null });
    expect(secrets().CLOUD_SIGNIN_ACME).toBeUndefined();
  });

  it('no token ever reaches the log', () => {
    const log = server.stderr();
    // Every token a workspace server accepted in this file (acme's sign-in is gone by now), and the ones still stored.
    const accepted = Object.values(cloud.workspaces).flatMap((workspace) => workspace.accepted);
    const stored = Object.values(secrets()).flatMap((value) => {
      const record = JSON.parse(value) as { access_token?: string; refresh_token?: string };
      return [record.access_token, record.refresh_token].filter((token) => token !== undefined);
    });
    expect(accepted.length).toBeGreaterThan(0);
    expect(stored.length).toBeGreaterThan(0);
    for (const token of [...accepted, ...stored]) expect(log).not.toContain(token);
    expect(log).toMatch(/cloud workspace signed in/);
  });
});
