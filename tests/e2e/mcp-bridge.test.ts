import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { CreatedKey } from '#shared/api/access.js';
import type { BridgeCallResult, BridgeToolList, McpServiceList, McpServiceStatus } from '#shared/api/bridge.js';
import { startHttpService, type HttpService } from '../fixtures/mcp/http-service.js';
import { rawRequest, runHearth } from '../helpers/hearth-cli.js';
import { EVERYTHING, FILESYSTEM, initializeBody, MCP_HEADERS, MEMORY, MISBEHAVING, processesWithMarker, waitFor } from '../helpers/mcp.js';
import { newDataDir, send, startServer, type RunningServer } from '../helpers/server.js';

/*
 * A real `hearth serve` with auth required and four MCP services (everything, server-memory,
 * server-filesystem over stdio; an HTTP service behind a token), driven from outside: the bridge
 * (GET /mcp/tools, POST /mcp/call) with keys of different scopes, the /mcp endpoint with the SDK's
 * own client, the loopback status routes and CLI, a service added by plan/apply, secrets kept out
 * of logs, exports and diagnostics, and no process left when the server stops.
 */

const marker = randomUUID();
const EVERYTHING_KEY = 'everything-key-3e1f0c9a7b5d';
const REMOTE_TOKEN = 'remote-token-6a4c2e0f8d1b';
let dataDir: string;
let server: RunningServer;
let remote: HttpService;
let toolsKey: string;
let readerKey: string;
let inferenceKey: string;

const env = { HEARTH_TEST_MARKER: marker };

async function createKey(body: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${server.url}/admin/keys`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(response.status).toBe(201);
  return ((await response.json()) as CreatedKey).key;
}

async function services(): Promise<McpServiceStatus[]> {
  return ((await (await send(server, '/admin/mcp/services')).json()) as McpServiceList).services;
}

async function toolNames(key: string): Promise<string[]> {
  const response = await send(server, '/mcp/tools', { key });
  expect(response.status).toBe(200);
  return ((await response.json()) as BridgeToolList).tools.map((tool) => tool.name).sort();
}

async function mcpClient(key: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** A POST to /mcp with exactly these headers (fetch cannot set Host; node:http can). */
function rawPost(
  port: number,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: '127.0.0.1', port, method: 'POST', path: '/mcp', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

function text(result: unknown): string {
  return ((result as { content: { text?: string }[] }).content ?? []).map((block) => block.text ?? '').join('\n');
}

beforeAll(async () => {
  remote = await startHttpService({ authorize: (request) => (request.headers.authorization === `Bearer ${REMOTE_TOKEN}` ? 'hearth' : false) });
  dataDir = await newDataDir(false);
  mkdirSync(join(dataDir, 'files'));
  writeFileSync(join(dataDir, 'files', 'readme.txt'), 'a file in the root');
  writeFileSync(join(dataDir, 'secrets.json'), JSON.stringify({ EVERYTHING_KEY, REMOTE_TOKEN }), { mode: 0o600 });
  const config = {
    version: 1,
    server: { auth: { required: true } },
    agents: [{ id: 'reader', tools: ['everything_echo', 'notes_*'], tool_policy: { write: 'deny' } }],
    mcp_services: [
      { name: 'everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: { API_KEY: 'secret:EVERYTHING_KEY', ...env } },
      {
        name: 'notes',
        transport: 'stdio',
        command: process.execPath,
        args: [MEMORY],
        env: { MEMORY_FILE_PATH: join(dataDir, 'notes.jsonl'), ...env },
        expose: 'all',
      },
      { name: 'files', transport: 'stdio', command: process.execPath, args: [FILESYSTEM, join(dataDir, 'files')], env },
      { name: 'remote', transport: 'http', url: remote.url, auth: { type: 'token', token: 'secret:REMOTE_TOKEN' } },
    ],
  };
  writeFileSync(join(dataDir, 'config.yaml'), stringify(config));
  server = await startServer({ dataDir, withModel: false, env: { HEARTH_LOG_LEVEL: 'info' } });
  await waitFor(async () => (await services()).every((service) => service.state === 'connected'), 'every MCP service to connect');
  toolsKey = await createKey({ label: 'tools', scopes: ['tools'] });
  readerKey = await createKey({ label: 'reader', scopes: ['tools'], agent: 'reader' });
  inferenceKey = await createKey({ label: 'inference only', scopes: ['inference'] });
});

afterAll(async () => {
  await server?.stop('SIGKILL');
  await remote?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('MCP services on a running server', () => {
  it('shows each service state and tools on the loopback route and in `hearth mcp status`', async () => {
    const list = await services();
    expect(list.map((service) => [service.name, service.state, service.protocol])).toEqual([
      ['everything', 'connected', 'stdio'],
      ['notes', 'connected', 'stdio'],
      ['files', 'connected', 'stdio'],
      ['remote', 'connected', 'streamable-http'],
    ]);
    const files = list.find((service) => service.name === 'files')!;
    expect(files.tools.find((tool) => tool.name === 'files_write_file')).toMatchObject({ class: 'write', exposed: false });
    expect(list.find((service) => service.name === 'remote')!.auth).toEqual({ type: 'token' });
    const cli = await runHearth(['mcp', 'status', '--data-dir', dataDir]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/^everything: connected via stdio/m);
    expect(cli.stdout).toMatch(/^remote: connected via streamable-http \(auth: token\)/m);
    expect(cli.stdout).toMatch(/files_write_file\s+write\s+agents only/);
  });

  it('bridge: lists the permitted catalog as {name, description, inputSchema}, never host-only or hidden write tools', async () => {
    const response = await send(server, '/mcp/tools', { key: toolsKey });
    const { tools } = (await response.json()) as BridgeToolList;
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['everything_echo', 'notes_create_entities', 'notes_read_graph', 'files_read_text_file', 'remote_whoami']));
    const builtins = ['read_file', 'list_files', 'search_files', 'write_file', 'edit_file', 'shell', 'current_time', 'memory_search_transcript', 'memory_pin'];
    for (const hidden of [...builtins, 'files_write_file', 'files_edit_file', 'everything_toggle-simulated-logging']) expect(names).not.toContain(hidden);
    for (const tool of tools) expect(Object.keys(tool).sort()).toEqual(['description', 'inputSchema', 'name']);
    expect(tools.find((tool) => tool.name === 'everything_echo')!.inputSchema).toMatchObject({ type: 'object', required: ['message'] });
  });

  it('bridge: calls a tool and answers the MCP CallToolResult; a failing tool is isError, not an HTTP error', async () => {
    const echoed = await send(server, '/mcp/call', { key: toolsKey, body: { name: 'everything_echo', arguments: { message: 'via the bridge' } } });
    expect(echoed.status).toBe(200);
    expect((await echoed.json()) as BridgeCallResult).toEqual({ content: [{ type: 'text', text: 'Echo: via the bridge' }] });
    const remoteCall = (await (await send(server, '/mcp/call', { key: toolsKey, body: { name: 'remote_whoami' } })).json()) as BridgeCallResult;
    expect(text(remoteCall)).toBe('caller: hearth');
    const outside = await send(server, '/mcp/call', {
      key: toolsKey,
      body: { name: 'files_read_text_file', arguments: { path: join(dataDir, 'secrets.json') } },
    });
    expect(outside.status).toBe(200);
    const refused = (await outside.json()) as BridgeCallResult;
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/Access denied/);
    expect(text(refused)).not.toContain(EVERYTHING_KEY);
  });

  it('bridge: arguments are checked against the schema (400 listing the problems)', async () => {
    const missing = await send(server, '/mcp/call', { key: toolsKey, body: { name: 'everything_echo', arguments: {} } });
    expect(missing.status).toBe(400);
    const body = (await missing.json()) as { error: { code: string; param: string; problems: { path: string; message: string }[] } };
    expect(body.error).toMatchObject({ code: 'invalid_request_error', param: 'arguments.message' });
    expect(body.error.problems).toEqual([{ path: 'arguments.message', message: 'is required' }]);
    const wrong = await send(server, '/mcp/call', { key: toolsKey, body: { name: 'everything_get-sum', arguments: { a: 'two', b: 3 } } });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: { problems: unknown[] } }).error.problems).toEqual([{ path: 'arguments.a', message: 'must be a number' }]);
    const noName = await send(server, '/mcp/call', { key: toolsKey, body: { arguments: {} } });
    expect(noName.status).toBe(400);
  });

  it('bridge: a hidden host-only tool, a hidden write tool and an absent tool all answer the same 404 tool_not_found', async () => {
    const answer = async (name: string) => {
      const response = await send(server, '/mcp/call', { key: toolsKey, body: { name, arguments: { path: '/tmp/x', content: 'x', command: 'id' } } });
      const body = (await response.json()) as { error: Record<string, unknown> };
      return { status: response.status, body: JSON.stringify(body).split(name).join('<name>') };
    };
    const absent = await answer('no_such_tool');
    expect(absent.status).toBe(404);
    expect(JSON.parse(absent.body).error).toMatchObject({ code: 'tool_not_found', type: 'invalid_request_error', param: 'name' });
    for (const hidden of ['shell', 'write_file', 'files_write_file', 'everything_toggle-simulated-logging']) expect(await answer(hidden)).toEqual(absent);
  });

  it("bridge: a key scoped to an agent sees only that agent's tools whose class its policy allows", async () => {
    expect(await toolNames(readerKey)).toEqual(['everything_echo', 'notes_open_nodes', 'notes_read_graph', 'notes_search_nodes']);
    const outside = await send(server, '/mcp/call', { key: readerKey, body: { name: 'everything_get-sum', arguments: { a: 1, b: 2 } } });
    expect(outside.status).toBe(404);
    const denied = await send(server, '/mcp/call', { key: readerKey, body: { name: 'notes_create_entities', arguments: { entities: [] } } });
    expect(denied.status).toBe(404);
    const allowed = await send(server, '/mcp/call', { key: readerKey, body: { name: 'everything_echo', arguments: { message: 'reader' } } });
    expect(text((await allowed.json()) as BridgeCallResult)).toBe('Echo: reader');
  });

  it('bridge and /mcp: no key is 401, a key without the tools scope is 403', async () => {
    expect((await send(server, '/mcp/tools')).status).toBe(401);
    expect((await send(server, '/mcp/tools', { key: inferenceKey })).status).toBe(403);
    expect((await send(server, '/mcp/call', { key: inferenceKey, body: { name: 'everything_echo', arguments: { message: 'x' } } })).status).toBe(403);
    expect((await send(server, '/mcp', { key: inferenceKey, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } })).status).toBe(403);
  });

  it('/mcp: the SDK client lists and calls the same permitted catalog; hidden tools are refused like absent ones', async () => {
    const { client, transport } = await mcpClient(toolsKey);
    try {
      expect(client.getServerVersion()?.name).toBe('hearth');
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(await toolNames(toolsKey));
      expect(tools.find((tool) => tool.name === 'everything_echo')!.annotations).toMatchObject({ readOnlyHint: true });
      const echoed = await client.callTool({ name: 'everything_echo', arguments: { message: 'over mcp' } });
      expect(echoed).toEqual({ content: [{ type: 'text', text: 'Echo: over mcp' }] });
      const structured = await client.callTool({ name: 'everything_get-structured-content', arguments: { location: 'Chicago' } });
      expect(structured.structuredContent).toBeDefined();
      const refusals = await Promise.all(
        ['shell', 'write_file', 'read_file', 'files_write_file', 'no_such_tool'].map((name) =>
          client.callTool({ name, arguments: {} }).then(
            () => 'accepted',
            (error: Error) => error.message.replace(name, '<name>'),
          ),
        ),
      );
      expect(refusals[0]).toMatch(/Tool <name> not found/);
      expect(new Set(refusals).size).toBe(1);
      const invalid = await client.callTool({ name: 'everything_echo', arguments: {} });
      expect(invalid.isError).toBe(true);
      expect(text(invalid)).toMatch(/arguments\.message is required/);
      expect(transport.sessionId).toBeTruthy();
    } finally {
      await transport.terminateSession();
      await client.close();
    }
  });

  it('/mcp: an agent-scoped key gets the narrowed catalog, and a session answers only the key that opened it', async () => {
    const reader = await mcpClient(readerKey);
    try {
      expect((await reader.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(await toolNames(readerKey));
      // Another key presenting this session id is answered as if the session did not exist.
      const stolen = await send(server, '/mcp', {
        key: toolsKey,
        headers: { ...MCP_HEADERS, 'mcp-session-id': reader.transport.sessionId!, 'mcp-protocol-version': '2025-06-18' },
        body: { jsonrpc: '2.0', id: 9, method: 'tools/list' },
      });
      expect(stolen.status).toBe(404);
    } finally {
      await reader.transport.terminateSession();
      await reader.client.close();
    }
    // After DELETE the session is gone.
    const after = await send(server, '/mcp', {
      key: readerKey,
      headers: { ...MCP_HEADERS, 'mcp-session-id': reader.transport.sessionId ?? 'none' },
      body: { jsonrpc: '2.0', id: 10, method: 'tools/list' },
    });
    expect(after.status).toBe(404);
  });

  it('/mcp: DNS rebinding is refused, by the perimeter and by the SDK transport', async () => {
    const port = Number(new URL(server.url).port);
    const headers = { authorization: `Bearer ${toolsKey}`, accept: 'application/json, text/event-stream' };
    const rebound = await rawRequest(port, 'GET /mcp HTTP/1.1', { ...headers, host: `attacker.example:${port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toContain('host_not_allowed');
    // A *.localhost name passes the perimeter (it can only mean this machine) but not the SDK's stricter list.
    const body = initializeBody('2025-06-18');
    const sdk = await rawPost(port, { ...headers, host: `sub.localhost:${port}`, 'content-type': 'application/json' }, body);
    expect(sdk.status).toBe(403);
    expect(sdk.body).toMatch(/Invalid Host header/);
    const direct = await rawPost(port, { ...headers, host: `localhost:${port}`, 'content-type': 'application/json' }, body);
    expect(direct.status).toBe(200);
    expect(direct.headers['mcp-session-id']).toBeTruthy();
  });

  it('a service added with plan/apply is high-risk (a local command), connects once applied, and /mcp clients hear the change', async () => {
    const { client, transport } = await mcpClient(toolsKey);
    let changed = 0;
    client.setNotificationHandler((await import('@modelcontextprotocol/sdk/types.js')).ToolListChangedNotificationSchema, () => void changed++);
    try {
      const added = { name: 'extra', transport: 'stdio', command: process.execPath, args: [MISBEHAVING, 'junk-then-ok'], env };
      const refused = await send(server, '/admin/config/apply', { body: { document: { version: 1, mcp_services: [added] } } });
      expect(refused.status).toBe(409);
      const risks = ((await refused.json()) as { error: { risks: { code: string }[] } }).error.risks.map((risk) => risk.code);
      expect(risks).toEqual(['runs_local_command']);
      const applied = await send(server, '/admin/config/apply', { body: { document: { version: 1, mcp_services: [added] }, confirm_high_risk: true } });
      expect(applied.status).toBe(200);
      await waitFor(async () => (await services()).find((service) => service.name === 'extra')?.state === 'connected', 'the new service to connect');
      expect(await toolNames(toolsKey)).toContain('extra_echo');
      await waitFor(() => changed > 0, 'a tools/list_changed notification on the open /mcp session');
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('extra_echo');
      // Exposing every tool of a service is high-risk too.
      const widen = await send(server, '/admin/config/plan', { body: { document: { version: 1, mcp_services: [{ ...added, expose: 'all' }] } } });
      expect(((await widen.json()) as { risks: { code: string }[] }).risks.map((risk) => risk.code)).toEqual(['exposes_write_tools']);
    } finally {
      await transport.terminateSession();
      await client.close();
    }
  });

  it('keeps every secret out of the log, the export and the diagnostics', async () => {
    // Make the services do enough to log: a reconnect and a failing call.
    const reconnected = await send(server, '/admin/mcp/services/remote/reconnect', { method: 'POST' });
    expect(((await reconnected.json()) as McpServiceStatus).state).toBe('connected');
    const everything = await send(server, '/mcp/call', { key: toolsKey, body: { name: 'everything_get-env' } });
    expect(text((await everything.json()) as BridgeCallResult)).toContain(EVERYTHING_KEY); // the service itself got it
    const exports = await Promise.all(
      ['/admin/config/export', '/admin/config/export?format=json', '/admin/mcp/services', '/admin/mcp/services/remote'].map(async (path) =>
        (await send(server, path)).text(),
      ),
    );
    const cli = await runHearth(['mcp', 'status', '--json', '--data-dir', dataDir]);
    for (const secret of [EVERYTHING_KEY, REMOTE_TOKEN, toolsKey, readerKey]) {
      for (const text of [...exports, cli.stdout, cli.stderr, server.stderr(), server.stdout()]) expect(text).not.toContain(secret);
    }
    expect(exports[0]).toContain('secret:REMOTE_TOKEN');
  });

  it('leaves no process behind when the server stops', async () => {
    const pids = (await services()).map((service) => service.pid).filter((pid): pid is number => pid !== null);
    expect(pids.length).toBe(4);
    expect(processesWithMarker(marker).length).toBeGreaterThanOrEqual(4);
    expect(await server.stop()).toBe(0);
    expect(processesWithMarker(marker)).toEqual([]);
  });
});
