import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { McpManager } from '../../../companion/src/mcp/manager.js';
import { startHttpService, type HttpService } from '../../fixtures/mcp/http-service.js';
import { alive, memorySecrets, processesWithMarker, startEverythingHttp, testManager, waitFor, type FixtureServer } from '../../helpers/mcp.js';

/*
 * HTTP services: the everything server over Streamable HTTP (forced onto 127.0.0.1) and over the
 * older SSE transport (fallback), and an in-process service that shows what arrives: token and
 * header authentication observed on the receiving side, refusals surfacing as authentication.
 */

const TOKEN = 'remote-token-9d8c7b6a5f4e3d2c';
const HEADER_SECRET = 'header-secret-0a1b2c3d4e5f';
let manager: McpManager | undefined;
let fixture: FixtureServer | undefined;
let service: HttpService | undefined;
const marker = randomUUID();

afterEach(async () => {
  await manager?.close();
  manager = undefined;
  await fixture?.stop();
  fixture = undefined;
  await service?.close();
  service = undefined;
});

afterAll(async () => {
  await waitFor(() => processesWithMarker(marker).length === 0, 'every fixture process to end');
});

function text(result: { content: unknown[] }): string {
  return (result.content as { text?: string }[]).map((block) => block.text ?? '').join('\n');
}

async function call(name: string) {
  return manager!.call(
    manager!.entries().find((entry) => entry.name === name)!,
    name.endsWith('echo') ? { message: 'over http' } : {},
  );
}

describe('HTTP MCP services', () => {
  it('the everything server over Streamable HTTP, listening on 127.0.0.1 only', async () => {
    fixture = await startEverythingHttp('streamableHttp', marker);
    expect(fixture.address).toBe('127.0.0.1');
    manager = testManager([{ name: 'remote', transport: 'http', url: fixture.url, auto_connect: false }]);
    const status = await manager.reconnect('remote');
    expect(status).toMatchObject({ state: 'connected', protocol: 'streamable-http', pid: null });
    expect(status.tools.map((tool) => tool.name)).toContain('remote_echo');
    expect(text(await call('remote_echo'))).toBe('Echo: over http');
    const pid = fixture.process.pid!;
    await manager.close();
    await fixture.stop();
    expect(alive(pid)).toBe(false);
  });

  it('an HTTP service that goes away: the call is isError, the service is failed (transport) and retried', async () => {
    fixture = await startEverythingHttp('streamableHttp', marker);
    manager = testManager([{ name: 'remote', transport: 'http', url: fixture.url, auto_connect: false }]);
    expect((await manager.reconnect('remote')).state).toBe('connected');
    await fixture.stop();
    const result = await call('remote_echo');
    expect(result.isError).toBe(true);
    const status = manager.serviceStatus('remote');
    expect(status).toMatchObject({ state: 'failed', layer: 'transport', tools: [], last_call_error: { tool: 'echo', layer: 'transport' } });
    expect(status.next_retry_at).not.toBeNull();
    expect(manager.entries().some((entry) => entry.service === 'remote')).toBe(false);
  });

  it('falls back to the older HTTP+SSE transport when the endpoint does not speak Streamable HTTP', async () => {
    fixture = await startEverythingHttp('sse', marker);
    manager = testManager([{ name: 'legacy', transport: 'http', url: fixture.url, auto_connect: false }]);
    const status = await manager.reconnect('legacy');
    expect(status).toMatchObject({ state: 'connected', protocol: 'sse' });
    expect(text(await call('legacy_echo'))).toBe('Echo: over http');
  });

  it('sends a token as a bearer credential, seen by the service, and never shows it', async () => {
    service = await startHttpService({ authorize: (request) => (request.headers.authorization === `Bearer ${TOKEN}` ? 'token-holder' : false) });
    manager = testManager(
      [{ name: 'remote', transport: 'http', url: service.url, auto_connect: false, auth: { type: 'token', token: 'secret:REMOTE_TOKEN' } }],
      { secrets: memorySecrets({ REMOTE_TOKEN: TOKEN }) },
    );
    const status = await manager.reconnect('remote');
    expect(status.state).toBe('connected');
    expect(service.requests.length).toBeGreaterThan(0);
    expect(service.requests.every((headers) => headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(text(await call('remote_whoami'))).toBe('caller: token-holder');
    expect(JSON.stringify(manager.status())).not.toContain(TOKEN);
    // The URL carries nothing.
    expect(service.requests.every((headers) => !JSON.stringify(headers).includes('?'))).toBe(true);
  });

  it('sends custom secret headers, seen by the service', async () => {
    service = await startHttpService({
      authorize: (request) => (request.headers['x-api-key'] === HEADER_SECRET && request.headers['x-org'] === 'org-7' ? 'header-holder' : false),
    });
    manager = testManager(
      [
        {
          name: 'org',
          transport: 'http',
          url: service.url,
          auto_connect: false,
          auth: { type: 'headers', headers: { 'X-Api-Key': 'secret:ORG_KEY', 'X-Org': 'env:HEARTH_MCP_TEST_ORG' } },
        },
      ],
      { secrets: memorySecrets({ ORG_KEY: HEADER_SECRET }) },
    );
    process.env.HEARTH_MCP_TEST_ORG = 'org-7';
    try {
      expect((await manager.reconnect('org')).state).toBe('connected');
    } finally {
      delete process.env.HEARTH_MCP_TEST_ORG;
    }
    expect(service.requests.every((headers) => headers['x-api-key'] === HEADER_SECRET)).toBe(true);
    expect(text(await call('org_whoami'))).toBe('caller: header-holder');
  });

  it('a refused credential surfaces as authentication, without the credential in the message; not retried', async () => {
    service = await startHttpService({ authorize: () => false });
    manager = testManager(
      [{ name: 'remote', transport: 'http', url: service.url, auto_connect: false, auth: { type: 'token', token: 'secret:REMOTE_TOKEN' } }],
      { secrets: memorySecrets({ REMOTE_TOKEN: TOKEN }) },
    );
    const status = await manager.reconnect('remote');
    expect(status).toMatchObject({ state: 'failed', layer: 'authentication', next_retry_at: null });
    expect(status.message).toMatch(/HTTP 401/);
    expect(JSON.stringify(status)).not.toContain(TOKEN);
    expect(service.requests[0]?.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('an endpoint nobody listens on: transport, with a retry scheduled', async () => {
    service = await startHttpService();
    const url = service.url;
    await service.close();
    service = undefined;
    manager = testManager([{ name: 'gone', transport: 'http', url, auto_connect: false }]);
    const status = await manager.reconnect('gone');
    expect(status).toMatchObject({ state: 'failed', layer: 'transport' });
    expect(status.message).toMatch(/ECONNREFUSED/);
    expect(status.next_retry_at).not.toBeNull();
  });
});
