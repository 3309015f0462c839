import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpServiceStatus } from '#shared/api/bridge.js';
import { runHearth } from '../helpers/hearth-cli.js';
import { newDataDir, startServer, type RunningServer } from '../helpers/server.js';

/*
 * Text from outside (an MCP service's error, a provider's error body) that echoes the request
 * back, credentials included, never shows those credentials: not in the log, not in a status,
 * not to an inference client.
 */

const MCP_TOKEN = 'mcp-echoed-token-5f1e2d3c4b5a69788796';
const PROVIDER_KEY = 'sk-echoed-provider-key-a1b2c3d4e5f60718';

/** Answers every request with `status` and a body that repeats the request's Authorization header. */
async function echoingServer(status: number): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const body = JSON.stringify({ error: { message: `Bad request. You sent Authorization: ${request.headers.authorization ?? 'nothing'}`, type: 'x' } });
      response.writeHead(status, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let hearth: RunningServer;
let mcp: { server: Server; url: string };
let provider: { server: Server; url: string };

beforeAll(async () => {
  mcp = await echoingServer(500);
  provider = await echoingServer(400);
  const dataDir = await newDataDir(false);
  for (const [name, value] of [
    ['ECHO_TOKEN', MCP_TOKEN],
    ['ECHO_KEY', PROVIDER_KEY],
  ]) {
    const set = await runHearth(['secret', 'set', name!, '--data-dir', dataDir], { stdin: value });
    expect(set.code, set.stderr).toBe(0);
  }
  writeFileSync(
    join(dataDir, 'config.yaml'),
    [
      'version: 1',
      'providers:',
      '  - name: echo',
      `    base_url: ${provider.url}/v1`,
      '    api_key: secret:ECHO_KEY',
      '    models: [m]',
      'mcp_services:',
      '  - name: echoer',
      '    transport: http',
      `    url: ${mcp.url}/mcp`,
      '    auth: { type: token, token: "secret:ECHO_TOKEN" }',
      '',
    ].join('\n'),
  );
  hearth = await startServer({ dataDir, withModel: false });
});

afterAll(async () => {
  await hearth?.stop();
  mcp?.server.close();
  provider?.server.close();
});

describe('an MCP service that echoes its token in an error (9)', () => {
  it('is logged and reported with the token redacted', async () => {
    await expect.poll(() => hearth.stderr()).toMatch(/MCP service \\?"echoer\\?" failed/);
    expect(hearth.stderr()).not.toContain(MCP_TOKEN);
    expect(hearth.stderr()).toContain('[redacted]');
    const status = (await (await fetch(`${hearth.url}/admin/mcp/services/echoer`)).json()) as McpServiceStatus;
    expect(status.state).toBe('failed');
    expect(JSON.stringify(status)).not.toContain(MCP_TOKEN);
  });
});

describe('a provider that echoes its key in an error body (10)', () => {
  it('relays the error with the key redacted', async () => {
    const response = await fetch(`${hearth.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'echo/m', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(text).not.toContain(PROVIDER_KEY);
    expect(text).toContain('[redacted]');
    expect(hearth.stderr()).not.toContain(PROVIDER_KEY);
  });
});
