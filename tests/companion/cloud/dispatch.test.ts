import { readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentTarget, type CloudTarget } from '../../../companion/src/access/agent-target.js';
import { CloudAgents } from '../../../companion/src/cloud/agents.js';
import { ArtifactFolder } from '../../../companion/src/cloud/artifacts.js';
import { dispatchTask, type CloudTaskEvent } from '../../../companion/src/cloud/dispatch.js';
import { CloudSignIn } from '../../../companion/src/cloud/sign-in.js';
import { silentLogger } from '../../../companion/src/logger.js';
import { SecretStore } from '../../../companion/src/store/secrets.js';
import type { CloudWorkspaceSettings } from '#shared/api/config.js';
import { startCloudFixture, type CloudFixture } from '../../fixtures/cloud/workspace.js';
import { browse } from '../../fixtures/mcp/oauth-service.js';
import { waitFor } from '../../helpers/mcp.js';

/*
 * A2A dispatch to real agents built with @a2a-js/sdk, signed in against a real oidc-provider:
 * streaming and polling, artifacts stored in the data folder, the A2A cancel, a refresh of the
 * token during dispatch, and no token for an agent on another origin.
 */

let cloud: CloudFixture;
let folder: string;
let callback: Server;
let signIn: CloudSignIn;
let agents: CloudAgents;
let settings: CloudWorkspaceSettings;

beforeAll(async () => {
  cloud = await startCloudFixture();
  folder = mkdtempSync(join(tmpdir(), 'hearth-cloud-'));
  // Stands in for the companion's redirect route: the test hands the query to CloudSignIn itself.
  callback = createServer((_request, response) => response.end('ok'));
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  settings = {
    name: 'acme',
    workspace_id: 'acme',
    workspace_claim: 'workspace_id',
    issuer: cloud.issuer,
    client_id: 'hearth',
    scopes: ['openid', 'offline_access', 'agents'],
    grant: 'authorization_code',
    agent_cards: [],
    directory: cloud.workspaces.acme.directory,
  };
  signIn = new CloudSignIn({ workspaces: () => [settings], secrets: new SecretStore(join(folder, 'secrets.json')), log: silentLogger });
  agents = new CloudAgents(signIn);
  const redirect = `http://127.0.0.1:${(callback.address() as { port: number }).port}/admin/cloud/oauth/callback`;
  const start = await signIn.begin('acme', redirect);
  const landed = await browse(start.authorization_url!, new URL(redirect).origin);
  await signIn.finish(new URL(landed.url).searchParams);
});

afterAll(async () => {
  signIn?.close();
  await cloud?.close();
  await new Promise<void>((resolve) => callback?.close(() => resolve()));
  rmSync(folder, { recursive: true, force: true });
});

async function dispatch(agentId: string, input: string, signal = new AbortController().signal, runId = `run_${agentId.replace(/\W/g, '_')}`) {
  const agent = await agents.find(agentTarget(agentId) as CloudTarget);
  const events: CloudTaskEvent[] = [];
  const outcome = await dispatchTask({
    agent,
    fetchImpl: agents.authorizedFetch(settings),
    input,
    artifacts: new ArtifactFolder(join(folder, 'artifacts'), runId),
    signal,
    onEvent: (event) => events.push(event),
    pollIntervalMs: 50,
  });
  return { outcome, events };
}

describe('A2A dispatch', () => {
  it('streams a task: states, text as it comes, artifacts stored in the data folder', async () => {
    const { outcome, events } = await dispatch('cloud:acme/writer', 'otters');
    expect(outcome.state).toBe('completed');
    const deltas = events.filter((event) => event.kind === 'text').map((event) => (event as { delta: string }).delta);
    expect(deltas.slice(0, 3)).toEqual(['# Draft\n', 'You asked: otters\n', 'The end.\n']);
    expect(outcome.text).toBe('# Draft\nYou asked: otters\nThe end.\n\n\nWrote a draft about otters.');
    expect(events.filter((event) => event.kind === 'status').map((event) => (event as { state: string }).state)).toEqual(['working', 'completed']);
    expect(outcome.artifacts.map((artifact) => [artifact.name, artifact.path, artifact.size_bytes])).toEqual([
      ['draft.md', 'run_cloud_acme_writer/draft.md', 35],
      ['report.bin', 'run_cloud_acme_writer/report.bin', 17],
    ]);
    expect(readFileSync(join(folder, 'artifacts', 'run_cloud_acme_writer', 'draft.md'), 'utf8')).toBe('# Draft\nYou asked: otters\nThe end.\n');
    expect(readFileSync(join(folder, 'artifacts', 'run_cloud_acme_writer', 'report.bin'), 'utf8')).toBe('report for otters');
  });

  it('polls a task whose agent does not stream', async () => {
    const { outcome, events } = await dispatch('cloud:acme/summarizer', 'a long text');
    expect(outcome.state).toBe('completed');
    expect(outcome.text).toBe('Summary: a long text\n\nSummarized.');
    expect(events.some((event) => event.kind === 'status' && event.state === 'working')).toBe(true);
    expect(outcome.artifacts.map((artifact) => artifact.name)).toEqual(['summary.txt']);
  });

  it('cancelling sends the A2A cancel and ends with the task cancelled', async () => {
    const controller = new AbortController();
    const executor = cloud.workspaces.acme.executors.slow;
    const running = dispatch('cloud:acme/slow-worker', 'forever', controller.signal);
    await waitFor(async () => executor.started.length > 0, 'the slow task to start');
    controller.abort();
    const { outcome } = await running;
    expect(outcome.state).toBe('canceled');
    expect(executor.cancelRequests).toEqual([outcome.taskId]);
  });

  it('refreshes the token before it expires, during dispatch', async () => {
    // From now on tokens live 30 s, inside the refresh margin: the next use must refresh first.
    cloud.accessTokenSeconds = 30;
    const stored = JSON.parse(JSON.parse(readFileSync(join(folder, 'secrets.json'), 'utf8')).CLOUD_SIGNIN_ACME as string) as { access_token: string };
    await signIn.rejected('acme', stored.access_token);
    const before = cloud.grants.refresh_token ?? 0;
    const { outcome } = await dispatch('cloud:acme/summarizer', 'again', undefined, 'run_refresh');
    expect(outcome.state).toBe('completed');
    expect(cloud.grants.refresh_token ?? 0).toBeGreaterThan(before);
    cloud.accessTokenSeconds = 3600;
  });

  it('sends no token to an agent on another origin than the workspace names', async () => {
    const stranger = { ...(await agents.find({ workspace: 'acme', agent: 'writer' })) };
    const url = cloud.workspaces.globex.cards.writer.replace('/.well-known/agent-card.json', '');
    stranger.card = { ...stranger.card, supportedInterfaces: [{ ...stranger.card.supportedInterfaces[0]!, url }] };
    const refused = cloud.workspaces.globex.refused;
    const failure = await dispatchTask({
      agent: stranger,
      fetchImpl: agents.authorizedFetch(settings),
      input: 'x',
      artifacts: new ArtifactFolder(join(folder, 'artifacts'), 'run_stranger'),
      signal: new AbortController().signal,
      onEvent: () => undefined,
    }).catch((error: unknown) => error as Error);
    expect((failure as Error).message).toMatch(/cloud agent cloud:acme\/writer failed/);
    expect(cloud.workspaces.globex.refused).toBe(refused + 1);
    expect(cloud.workspaces.globex.accepted).toEqual([]);
  });
});
