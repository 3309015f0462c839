import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentRun, AgentRunEventList, AgentRunList } from '#shared/api/agents.js';
import { startScriptedProvider, type ScriptedProvider } from '../../fixtures/scripted-provider.js';
import { agentDataDir, parseEvents, waitFor } from '../../helpers/agents.js';
import { testApp } from '../../helpers/app.js';
import { alive } from '../../helpers/mcp.js';

let provider: ScriptedProvider;
let app: Awaited<ReturnType<typeof testApp>>;
let base: string;
const workspace = mkdtempSync(join(tmpdir(), 'hearth-lifecycle-ws-'));

beforeAll(async () => {
  provider = await startScriptedProvider();
  const agent = { model: 'script/scripted', memory: { enabled: false }, workspace };
  const dataDir = await agentDataDir({
    provider,
    agents: [
      { id: 'runner', ...agent, tools: ['shell', 'write_file', 'read_file'], tool_policy: { exec: 'auto', write: 'auto' } },
      { id: 'other', ...agent, tools: [] },
    ],
  });
  app = await testApp({ dataDir });
  base = await app.app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app?.close();
  await provider?.close();
});

const runRequest = (agent: string, payload: Record<string, unknown>) => app.app.inject({ method: 'POST', url: `/agents/${agent}/run`, payload });
const get = <T>(url: string, headers: Record<string, string> = {}) => app.app.inject({ method: 'GET', url, headers }).then((response) => response.json() as T);

describe('cancel', () => {
  it('cancels during a tool: the command and its process group die, the run is cancelled', async () => {
    const pidFile = join(workspace, 'cancel.pid');
    provider.setScript([{ tool_calls: [{ name: 'shell', arguments: { command: `sleep 300 & echo $! > ${pidFile}; wait` } }] }, { content: 'never' }]);
    const started = runRequest('runner', { input: 'sleep a while', stream: true });
    const grandchild = await waitFor(() => (existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() ? Number(readFileSync(pidFile, 'utf8')) : undefined));
    const runId = (await get<AgentRunList>('/agents/runner/runs')).data[0]!.id;
    const cancelled = (await app.app.inject({ method: 'POST', url: `/agents/runs/${runId}/cancel` })).json() as AgentRun;
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.steps[0]!.tool_calls[0]).toMatchObject({ name: 'shell', is_error: true });
    expect(cancelled.steps[0]!.tool_calls[0]!.output).toContain('cancelled');
    await waitFor(() => (alive(grandchild) ? undefined : true), 5000, 'the command to be killed');
    const events = parseEvents((await started).body).map((event) => event.event);
    expect(events).toEqual(['run.created', 'tool_call.created', 'tool_call.completed', 'run.cancelled']);
    // The model was not called again, and cancelling again answers the same run.
    expect(provider.requests.at(-1)!.body.messages.at(-1).content).toBe('sleep a while');
    expect(((await app.app.inject({ method: 'POST', url: `/agents/runs/${runId}/cancel` })).json() as AgentRun).status).toBe('cancelled');
  });

  it('cancels while the model is answering', async () => {
    provider.setScript([{ content: 'slow', delayMs: 30_000 }]);
    const started = runRequest('runner', { input: 'think slowly' });
    await waitFor(() => (provider.requests.at(-1)?.body.messages.at(-1)?.content === 'think slowly' ? true : undefined));
    const runId = (await get<AgentRunList>('/agents/runner/runs')).data[0]!.id;
    await app.app.inject({ method: 'POST', url: `/agents/runs/${runId}/cancel` });
    expect(((await started).json() as AgentRun).status).toBe('cancelled');
    await waitFor(() => (provider.requests.at(-1)!.aborted ? true : undefined), 5000, 'the provider request to be aborted');
  });

  it('an unknown run is 404', async () => {
    const response = await app.app.inject({ method: 'POST', url: '/agents/runs/run_nope/cancel' });
    expect(response.statusCode).toBe(404);
    expect(response.json().error.code).toBe('run_not_found');
  });
});

describe('a client that goes away', () => {
  it('does not stop the run: it finishes, and its events can be read and followed afterwards', async () => {
    const marker = join(workspace, 'after-disconnect.txt');
    provider.setScript((_body, index) =>
      index === 0
        ? { tool_calls: [{ name: 'write_file', arguments: { path: 'after-disconnect.txt', content: 'still ran' } }], delayMs: 300 }
        : { content: 'Wrote it.' },
    );
    const controller = new AbortController();
    const response = await fetch(`${base}/agents/runner/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'write after I leave', stream: true }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const runId = parseEvents(first)[0]!.data.run_id;
    controller.abort();
    await waitFor(() => (existsSync(marker) ? true : undefined), 10_000, 'the run to write its file');
    const run = await waitFor(async () => {
      const current = await get<AgentRun>(`/agents/runs/${runId}`);
      return current.status === 'completed' ? current : undefined;
    });
    expect(run.output_text).toBe('Wrote it.');
    expect(readFileSync(marker, 'utf8')).toBe('still ran');
    const events = await get<AgentRunEventList>(`/agents/runs/${runId}/events`);
    expect(events.data.map((event) => event.type)).toEqual([
      'run.created',
      'tool_call.created',
      'tool_call.completed',
      'message.delta',
      'message.delta',
      'run.completed',
    ]);
    // Following a finished run replays it and ends.
    const replay = await fetch(`${base}/agents/runs/${runId}/events?after=3`, { headers: { accept: 'text/event-stream' } });
    expect(parseEvents(await replay.text()).map((event) => event.data.sequence)).toEqual([4, 5, 6]);
  });

  it('a second client can follow a live run from where it left off', async () => {
    provider.setScript([{ content: 'one two three', delayMs: 500 }]);
    const started = runRequest('runner', { input: 'count' });
    const runId = await waitFor(async () => (await get<AgentRunList>('/agents/runner/runs')).data.find((entry) => entry.status === 'running')?.id);
    const follower = await fetch(`${base}/agents/runs/${runId}/events?after=1`, { headers: { accept: 'text/event-stream' } });
    const events = parseEvents(await follower.text());
    expect(events.map((event) => event.event)).toEqual(['message.delta', 'message.delta', 'message.delta', 'run.completed']);
    expect(((await started).json() as AgentRun).status).toBe('completed');
  });
});

describe('long runs', () => {
  it('pages events 1000 at a time, and a follower gets every one of them in order', async () => {
    const words = Array.from({ length: 1200 }, (_value, index) => `w${index}`).join(' ');
    provider.setScript([{ content: words }]);
    const run = (await runRequest('runner', { input: 'many words' })).json() as AgentRun;
    const first = await get<AgentRunEventList>(`/agents/runs/${run.id}/events`);
    expect(first.data).toHaveLength(1000);
    expect(first.has_more).toBe(true);
    const rest = await get<AgentRunEventList>(`/agents/runs/${run.id}/events?after=1000`);
    expect(rest.has_more).toBe(false);
    expect(rest.data.at(-1)!.type).toBe('run.completed');
    const followed = parseEvents(await (await fetch(`${base}/agents/runs/${run.id}/events`, { headers: { accept: 'text/event-stream' } })).text());
    expect(followed.map((event) => event.data.sequence)).toEqual([...first.data, ...rest.data].map((event) => event.sequence));
    expect(followed.length).toBe(1 + 1200 + 1);
  });
});

describe('history and scoped keys', () => {
  it('lists an agent’s runs newest first, with step counts', async () => {
    const list = await get<AgentRunList>('/agents/runner/runs?limit=2');
    expect(list.data).toHaveLength(2);
    expect(list.has_more).toBe(true);
    expect(list.data[0]!.created_at).toBeGreaterThanOrEqual(list.data[1]!.created_at);
    expect(typeof list.data[0]!.steps).toBe('number');
    expect((await get<AgentRunList>('/agents/other/runs')).data).toEqual([]);
  });

  it('a key scoped to another agent cannot run, see or cancel this agent’s runs', async () => {
    const { key } = app.services.keys.create({ label: 'other only', agent: 'other', scopes: ['agents'] });
    const auth = { authorization: `Bearer ${key}` };
    const runId = (await get<AgentRunList>('/agents/runner/runs')).data[0]!.id;
    expect((await app.app.inject({ method: 'POST', url: '/agents/runner/run', headers: auth, payload: { input: 'x' } })).statusCode).toBe(403);
    expect((await app.app.inject({ method: 'GET', url: `/agents/runs/${runId}`, headers: auth })).statusCode).toBe(404);
    expect((await app.app.inject({ method: 'GET', url: `/agents/runs/${runId}/events`, headers: auth })).statusCode).toBe(404);
    expect((await app.app.inject({ method: 'POST', url: `/agents/runs/${runId}/cancel`, headers: auth })).statusCode).toBe(404);
    expect((await get<{ data: { id: string }[] }>('/agents', auth)).data.map((agent) => agent.id)).toEqual(['other']);
  });
});
