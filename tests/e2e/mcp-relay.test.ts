import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, type LoggingMessageNotification, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { McpServiceList } from '#shared/api/bridge.js';
import { EVERYTHING, initializeMcp, MCP_HEADERS, startEverythingHttp, waitFor, type FixtureServer } from '../helpers/mcp.js';
import { newDataDir, startServer, type RunningServer } from '../helpers/server.js';

/*
 * A real `hearth serve` with three server-everything services: `everything` over stdio (expose:
 * all), `web` over Streamable HTTP (expose: read) and `hidden` over stdio (expose: none), used
 * from outside through /mcp with the SDK's client: progress and log messages relayed, resources
 * and prompts offered under the services' names, and a broken SSE stream resumed with Last-Event-ID.
 */

const marker = randomUUID();
let server: RunningServer;
let web: FixtureServer;
let client: Client;
let transport: StreamableHTTPClientTransport;
const logs: LoggingMessageNotification['params'][] = [];

beforeAll(async () => {
  web = await startEverythingHttp('streamableHttp', marker);
  const dataDir = await newDataDir(false);
  const stdio = (name: string, expose: string) => ({
    name,
    transport: 'stdio',
    command: process.execPath,
    args: [EVERYTHING],
    env: { HEARTH_TEST_MARKER: marker },
    expose,
  });
  writeFileSync(
    join(dataDir, 'config.yaml'),
    stringify({
      version: 1,
      mcp_services: [stdio('everything', 'all'), { name: 'web', transport: 'http', url: web.url, expose: 'read' }, stdio('hidden', 'none')],
    }),
  );
  server = await startServer({ dataDir });
  await waitFor(async () => {
    const list = (await (await fetch(`${server.url}/admin/mcp/services`)).json()) as McpServiceList;
    return list.services.every((service) => service.state === 'connected');
  }, 'every service connected');
  client = new Client({ name: 'relay-test', version: '1.0.0' });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logs.push(notification.params));
  transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`));
  await client.connect(transport);
}, 60_000);

afterAll(async () => {
  await transport?.terminateSession().catch(() => undefined);
  await client?.close();
  expect(await server.stop()).toBe(0);
  await web.stop();
});

async function progressOf(tool: string): Promise<{ progress: Progress[]; text: string }> {
  const progress: Progress[] = [];
  const result = await client.callTool({ name: tool, arguments: { duration: 0.4, steps: 4 } }, undefined, { onprogress: (update) => progress.push(update) });
  return { progress, text: (result.content as { text: string }[])[0]!.text };
}

describe('/mcp relays what services send', () => {
  it('hands a long-running tool’s progress to the caller’s onprogress, from a stdio and an HTTP service', async () => {
    for (const tool of ['everything_trigger-long-running-operation', 'web_trigger-long-running-operation']) {
      const { progress, text } = await progressOf(tool);
      // The SDK's client runs notification handlers a microtask late but settles a response at once, so
      // the last update can miss onprogress when it arrives in the same read as the result. Hearth sends
      // all of them in order before the result (the raw stream below sees every one).
      const expected = [
        [1, 4],
        [2, 4],
        [3, 4],
        [4, 4],
      ];
      expect(progress.length).toBeGreaterThanOrEqual(3);
      expect(progress.map((update) => [update.progress, update.total])).toEqual(expected.slice(0, progress.length));
      expect(text).toMatch(/Long running operation completed/);
    }
  });

  it('relays a service’s log messages, named after the service and filtered by the session’s level', async () => {
    await client.setLoggingLevel('debug');
    const started = await client.callTool({ name: 'everything_toggle-simulated-logging', arguments: {} });
    expect((started.content as { text: string }[])[0]!.text).toMatch(/Started simulated/);
    try {
      await waitFor(() => logs.some((log) => log.logger === 'everything'), 'a log message from everything');
      expect(logs.find((log) => log.logger === 'everything')!.data).toMatch(/level[- ]message/);
      expect(logs.every((log) => log.logger !== 'hidden')).toBe(true);
    } finally {
      await client.callTool({ name: 'everything_toggle-simulated-logging', arguments: {} });
    }
  });

  it('says an unknown tool’s error once', async () => {
    const error = await client.callTool({ name: 'no_such_tool', arguments: {} }).catch((caught: Error) => caught);
    expect((error as Error).message).toBe('MCP error -32602: Tool no_such_tool not found');
  });
});

describe('/mcp offers the services’ resources and prompts, named like tools, under expose', () => {
  it('lists resources under hearth://<service>/ URIs and names, only from services whose expose allows reads', async () => {
    const { resources } = await client.listResources();
    expect(resources.length).toBeGreaterThan(0);
    const services = new Set(resources.map((resource) => /^hearth:\/\/([^/]+)\//.exec(resource.uri)?.[1]));
    expect([...services].sort()).toEqual(['everything', 'web']);
    for (const resource of resources) expect(resource.name.startsWith(`${/^hearth:\/\/([^/]+)\//.exec(resource.uri)![1]}_`)).toBe(true);
    const document = resources.find((resource) => resource.uri.startsWith('hearth://everything/demo://resource/static/'))!;
    const read = await client.readResource({ uri: document.uri });
    expect(read.contents[0]!.uri).toBe(document.uri);
    expect(read.contents[0]).toHaveProperty('text');
    const sameFromWeb = document.uri.replace('hearth://everything/', 'hearth://web/');
    expect((await client.readResource({ uri: sameFromWeb })).contents[0]!.uri).toBe(sameFromWeb);
  });

  it('offers resource templates that read back through Hearth', async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    const template = resourceTemplates.find((candidate) => candidate.uriTemplate === 'hearth://everything/demo://resource/dynamic/text/{resourceId}');
    expect(template).toBeDefined();
    const read = await client.readResource({ uri: 'hearth://everything/demo://resource/dynamic/text/7' });
    expect(read.contents[0]).toMatchObject({ uri: 'hearth://everything/demo://resource/dynamic/text/7' });
    expect(resourceTemplates.some((candidate) => candidate.uriTemplate.startsWith('hearth://hidden/'))).toBe(false);
  });

  it('refuses a resource of a hidden or unknown service as not found, saying so once', async () => {
    for (const uri of ['hearth://hidden/demo://resource/dynamic/text/1', 'demo://resource/dynamic/text/1']) {
      const error = (await client.readResource({ uri }).catch((caught: Error) => caught)) as Error & { code: number };
      expect(error.code).toBe(-32002);
      expect(error.message).toBe(`MCP error -32002: Resource ${uri} not found`);
    }
  });

  it('lists prompts as <service>_<prompt> and gets one with its arguments, resource URIs rewritten', async () => {
    const { prompts } = await client.listPrompts();
    const names = prompts.map((prompt) => prompt.name);
    expect(names).toContain('everything_simple-prompt');
    expect(names).toContain('web_args-prompt');
    expect(names.some((name) => name.startsWith('hidden_'))).toBe(false);
    const args = await client.getPrompt({ name: 'everything_args-prompt', arguments: { city: 'Lisbon' } });
    expect(JSON.stringify(args.messages)).toContain('Lisbon');
    const withResource = await client.getPrompt({ name: 'everything_resource-prompt', arguments: { resourceType: 'Text', resourceId: '3' } });
    const embedded = withResource.messages.find((message) => message.content.type === 'resource')!.content as { resource: { uri: string } };
    expect(embedded.resource.uri).toBe('hearth://everything/demo://resource/dynamic/text/3');
    const error = (await client.getPrompt({ name: 'hidden_simple-prompt' }).catch((caught: Error) => caught)) as Error;
    expect(error.message).toBe('MCP error -32602: Prompt hidden_simple-prompt not found');
  });

  it('rewrites resource links in tool results so they read back through Hearth', async () => {
    const result = await client.callTool({ name: 'everything_get-resource-links', arguments: { count: 2 } });
    const links = (result.content as { type: string; uri?: string }[]).filter((part) => part.type === 'resource_link');
    expect(links).toHaveLength(2);
    for (const link of links) {
      expect(link.uri).toMatch(/^hearth:\/\/everything\//);
      expect((await client.readResource({ uri: link.uri! })).contents[0]!.uri).toBe(link.uri);
    }
  });
});

/** Reads SSE events from a fetch body until `enough` says stop; returns them with their ids. */
async function readEvents(body: ReadableStream<Uint8Array>, enough: (events: { id?: string; data: string }[]) => boolean) {
  const events: { id?: string; data: string }[] = [];
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  while (!enough(events)) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const id = /^id: (.*)$/m.exec(block)?.[1];
      const data = /^data: ?(.*)$/m.exec(block)?.[1] ?? '';
      events.push({ ...(id === undefined ? {} : { id }), data });
    }
  }
  await reader.cancel().catch(() => undefined);
  return events;
}

describe('/mcp SSE resumption', () => {
  it('a broken POST stream resumes with Last-Event-ID: the missed progress and the result arrive on GET', async () => {
    const headers = { ...MCP_HEADERS, 'mcp-protocol-version': '2025-11-25' };
    const init = await initializeMcp(server.url, '2025-11-25', headers);
    const session = init.headers.get('mcp-session-id')!;
    await readEvents(init.body!, (events) => events.some((event) => event.data.includes('"result"')));
    const withSession = { ...headers, 'mcp-session-id': session };
    await fetch(`${server.url}/mcp`, { method: 'POST', headers: withSession, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });

    const abort = new AbortController();
    const call = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: withSession,
      signal: abort.signal,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'everything_trigger-long-running-operation', arguments: { duration: 1.2, steps: 4 }, _meta: { progressToken: 'p' } },
      }),
    });
    const before = await readEvents(call.body!, (events) => events.some((event) => event.data.includes('notifications/progress')));
    abort.abort();
    const lastSeen = before.filter((event) => event.id !== undefined).at(-1)!.id!;
    expect(before.filter((event) => event.data.includes('notifications/progress'))).toHaveLength(1);

    const resume = async () => {
      const resumed = await fetch(`${server.url}/mcp`, { headers: { ...withSession, accept: 'text/event-stream', 'last-event-id': lastSeen } });
      expect(resumed.status).toBe(200);
      return readEvents(resumed.body!, (events) => events.some((event) => event.data.includes('"id":2')));
    };
    // The missed events come on a GET with Last-Event-ID, replayed or live as the tool goes on.
    const after = await resume();
    const progress = after.filter((event) => event.data.includes('notifications/progress')).map((event) => JSON.parse(event.data).params.progress);
    expect(progress).toEqual([2, 3, 4]);
    expect(JSON.parse(after.find((event) => event.data.includes('"id":2'))!.data).result.content[0].text).toMatch(/completed/);
    expect(after.every((event) => Number(event.id) > Number(lastSeen))).toBe(true);
    // The tool has ended (its result came) and nobody listens now: its events are kept for this
    // session, and the same Last-Event-ID gets every one of them again, from the store alone.
    expect(await resume()).toEqual(after);

    const unknown = await fetch(`${server.url}/mcp`, { headers: { ...withSession, accept: 'text/event-stream', 'last-event-id': '999999' } });
    expect(unknown.status).toBe(400);
    await fetch(`${server.url}/mcp`, { method: 'DELETE', headers: withSession });
  });
});
