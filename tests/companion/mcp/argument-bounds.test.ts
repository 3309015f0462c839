import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../../companion/src/services.js';
import type { McpServiceStatus } from '#shared/api/bridge.js';
import { testApp } from '../../helpers/app.js';
import { EVERYTHING, initializeMcp, MCP_HEADERS, waitFor } from '../../helpers/mcp.js';
import { newDataDir } from '../../helpers/server.js';

/*
 * One tool call cannot knock a service down for everyone (8): arguments nested 10,000 deep are
 * refused at the bridge and at /mcp before anything is sent, and an error raised on Hearth's
 * side of a call is that call's tool error, never a transport failure that restarts the service.
 */

let app: FastifyInstance;
let services: Services;
let close: () => Promise<void>;
let base: string;

beforeAll(async () => {
  const dataDir = await newDataDir(false);
  writeFileSync(
    join(dataDir, 'config.yaml'),
    `version: 1\nmcp_services:\n  - name: e\n    transport: stdio\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(EVERYTHING)}]\n    expose: all\n`,
  );
  ({ app, services, close } = await testApp({ dataDir, withModel: false }));
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  await waitFor(() => services.mcp.serviceStatus('e').state === 'connected', 'the everything service to connect', 60_000);
});

afterAll(async () => {
  await close();
});

/** `{"message":"x","deep":[[[…]]]}` nested `depth` deep, as JSON text (a client can send what JSON.stringify cannot build). */
const deepArguments = (depth: number) => `{"message":"x","deep":${'['.repeat(depth)}${']'.repeat(depth)}}`;

const status = (): McpServiceStatus => services.mcp.serviceStatus('e');

async function slowCall(): Promise<{ isError?: boolean }> {
  const response = await fetch(`${base}/mcp/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'e_trigger-long-running-operation', arguments: { duration: 1, steps: 1 } }),
  });
  return (await response.json()) as { isError?: boolean };
}

describe('arguments nested 10,000 deep', () => {
  it('are refused at POST /mcp/call with a 400, and another client’s call in flight still succeeds', async () => {
    const since = status().since;
    const inFlight = slowCall();
    const response = await fetch(`${base}/mcp/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"name":"e_echo","arguments":${deepArguments(10_000)}}`,
    });
    expect(response.status).toBe(400);
    const error = ((await response.json()) as { error: { code: string; param: string; message: string } }).error;
    expect(error).toMatchObject({ code: 'invalid_request_error', param: 'arguments' });
    expect(error.message).toMatch(/deep/);
    expect((await inFlight).isError).toBeFalsy();
    expect(status()).toMatchObject({ state: 'connected', since });
    expect(status().tools.length).toBeGreaterThan(0);
  });

  it('are a tool error at /mcp (isError), and the service stays connected', async () => {
    const since = status().since;
    const init = await initializeMcp(base, '2025-03-26');
    await init.text();
    const session = init.headers.get('mcp-session-id')!;
    const called = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-03-26' },
      body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"e_echo","arguments":${deepArguments(10_000)}}}`,
    });
    const text = await called.text();
    expect(called.status).toBe(200);
    expect(text).toMatch(/"isError":true/);
    expect(text).toMatch(/deep/);
    expect(status()).toMatchObject({ state: 'connected', since });
  });

  it('moderately nested arguments (64 deep) still go through', async () => {
    const response = await fetch(`${base}/mcp/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"name":"e_echo","arguments":${deepArguments(60)}}`,
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { isError?: boolean }).isError).toBeFalsy();
  });
});

describe('an error on Hearth’s side of a call', () => {
  it('is the call’s tool error, never a transport failure', async () => {
    const since = status().since;
    const entry = services.mcp.entries().find((candidate) => candidate.name === 'e_echo')!;
    // Arguments that cannot be serialised: the SDK throws before anything reaches the service.
    const result = await services.mcp.call(entry, { message: 'x', big: 10n as unknown as number });
    expect(result.isError).toBe(true);
    expect(status()).toMatchObject({ state: 'connected', since });
    expect(status().last_call_error?.layer).toBe('tool_error');
  });
});
