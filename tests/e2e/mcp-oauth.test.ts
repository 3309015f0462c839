import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { BridgeCallResult, McpLoginStart, McpServiceStatus } from '#shared/api/bridge.js';
import { browse, startOAuthService, type OAuthService } from '../fixtures/mcp/oauth-service.js';
import { runHearth } from '../helpers/hearth-cli.js';
import { waitFor } from '../helpers/mcp.js';
import { newDataDir, startServer, type RunningServer } from '../helpers/server.js';

/*
 * OAuth sign-in to an MCP service protected by a real authorization server (oidc-provider):
 * a real `hearth serve` discovers the server, registers itself, sends the browser there with
 * PKCE, takes the code on its loopback redirect route, keeps the tokens as a secret, refreshes
 * them when the service rejects the access token, and signs in again after a restart from what
 * it kept. No token ever appears in a log, an export or a diagnostic.
 */

let oauth: OAuthService;
let dataDir: string;
let server: RunningServer | undefined;
const stderrs: string[] = [];

async function start(): Promise<RunningServer> {
  server = await startServer({ dataDir, withModel: false, env: { HEARTH_LOG_LEVEL: 'info' } });
  return server;
}

async function stop(): Promise<void> {
  if (!server) return;
  await server.stop();
  stderrs.push(server.stderr(), server.stdout());
  server = undefined;
}

async function status(): Promise<McpServiceStatus> {
  return (await (await fetch(`${server!.url}/admin/mcp/services/cloud`)).json()) as McpServiceStatus;
}

async function whoami(): Promise<BridgeCallResult> {
  const response = await fetch(`${server!.url}/mcp/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'cloud_whoami' }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as BridgeCallResult;
}

function secretsFile(): Record<string, string> {
  return JSON.parse(readFileSync(join(dataDir, 'secrets.json'), 'utf8')) as Record<string, string>;
}

beforeAll(async () => {
  oauth = await startOAuthService();
  dataDir = await newDataDir(false);
  writeFileSync(
    join(dataDir, 'config.yaml'),
    stringify({ version: 1, mcp_services: [{ name: 'cloud', transport: 'http', url: oauth.service.url, auth: { type: 'oauth' } }] }),
  );
  await start();
});

afterAll(async () => {
  await server?.stop('SIGKILL');
  await oauth?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('OAuth sign-in to an MCP service', () => {
  it('before sign-in the service is failed at the authentication layer, and says how to sign in', async () => {
    await waitFor(async () => (await status()).state === 'failed', 'the first connection attempt');
    expect(await status()).toMatchObject({ state: 'failed', layer: 'authentication', auth: { type: 'oauth', signed_in: false }, next_retry_at: null });
    expect((await status()).message).toMatch(/hearth mcp login cloud/);
    // Nothing was registered or requested yet: Hearth does not start a sign-in by itself.
    expect(oauth.registrations).toBe(0);
  });

  it('signs in: discovery, dynamic registration, PKCE, the loopback redirect, tokens kept as a secret', async () => {
    const cli = await runHearth(['mcp', 'login', 'cloud', '--no-wait', '--data-dir', dataDir]);
    expect(cli.code, cli.stderr).toBe(0);
    const shown = /(http:\/\/\S+\/auth\?\S+)/.exec(cli.stdout)?.[1];
    expect(shown).toBeDefined();
    // The one the browser follows: started again through the route (a fresh sign-in each time).
    const response = await fetch(`${server!.url}/admin/mcp/services/cloud/login`, { method: 'POST' });
    expect(response.status).toBe(200);
    const login = (await response.json()) as McpLoginStart;
    const url = new URL(login.authorization_url);
    expect(url.origin).toBe(oauth.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('redirect_uri')).toBe(`${server!.url}/admin/mcp/oauth/callback`);
    expect(url.searchParams.get('resource')).toBe(oauth.service.url);
    expect(oauth.registrations).toBe(1);

    const page = await browse(login.authorization_url, server!.url);
    expect(page.status).toBe(200);
    expect(page.body).toContain('Signed in to cloud');
    expect(await status()).toMatchObject({ state: 'connected', layer: null, protocol: 'streamable-http', auth: { type: 'oauth', signed_in: true } });
    expect(oauth.grants).toEqual({ authorization_code: 1 });
    expect((await whoami()).content).toEqual([{ type: 'text', text: 'caller: alice' }]);

    const kept = JSON.parse(secretsFile().MCP_OAUTH_CLOUD!) as { tokens: { access_token: string; refresh_token: string } };
    expect(kept.tokens.access_token).toBe(oauth.accepted.at(-1));
    expect(kept.tokens.refresh_token).toBeTruthy();
    expect(statSync(join(dataDir, 'secrets.json')).mode & 0o777).toBe(0o600);
  });

  it('refreshes the tokens when the service rejects the access token, without a new sign-in', async () => {
    const before = oauth.accepted.length;
    oauth.expireAcceptedTokens();
    const result = await whoami();
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'caller: alice' }]);
    expect(oauth.grants).toEqual({ authorization_code: 1, refresh_token: 1 });
    expect(oauth.accepted.length).toBe(before + 1);
    const kept = JSON.parse(secretsFile().MCP_OAUTH_CLOUD!) as { tokens: { access_token: string } };
    expect(kept.tokens.access_token).toBe(oauth.accepted.at(-1));
  });

  it('after a restart, connects with the kept tokens (no sign-in), refreshing them as needed', async () => {
    await stop();
    oauth.expireAcceptedTokens();
    await start();
    await waitFor(async () => (await status()).state === 'connected', 'the reconnection after restart');
    expect(oauth.grants).toEqual({ authorization_code: 1, refresh_token: 2 });
    expect(oauth.registrations).toBe(1);
    expect((await whoami()).content).toEqual([{ type: 'text', text: 'caller: alice' }]);
  });

  it('refuses a redirect it did not start (unknown state) and an error from the authorization server', async () => {
    const forged = await fetch(`${server!.url}/admin/mcp/oauth/callback?code=abc&state=not-ours`);
    expect(forged.status).toBe(400);
    expect(await forged.text()).toMatch(/unknown or has expired/);
    const denied = await fetch(`${server!.url}/admin/mcp/oauth/callback?error=access_denied&state=x`);
    expect(denied.status).toBe(400);
    expect((await status()).state).toBe('connected');
  });

  it('keeps every token out of logs, exports and diagnostics', async () => {
    const kept = JSON.parse(secretsFile().MCP_OAUTH_CLOUD!) as { tokens: { access_token: string; refresh_token: string }; client: { client_id: string } };
    const texts = await Promise.all(
      ['/admin/config/export', '/admin/config/export?format=json', '/admin/mcp/services'].map(async (path) => (await fetch(`${server!.url}${path}`)).text()),
    );
    const cli = await runHearth(['mcp', 'status', '--json', '--data-dir', dataDir]);
    await stop();
    const tokens = [...oauth.accepted, kept.tokens.access_token, kept.tokens.refresh_token];
    for (const token of tokens) for (const text of [...texts, cli.stdout, cli.stderr, ...stderrs]) expect(text).not.toContain(token);
    expect(texts[0]).not.toContain('MCP_OAUTH');
  });
});
