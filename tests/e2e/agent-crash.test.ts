import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentApprovalList, AgentRun, AgentRunEventList } from '#shared/api/agents.js';
import { startScriptedProvider, type ScriptedProvider } from '../fixtures/scripted-provider.js';
import { agentDataDir, parseEvents, waitFor } from '../helpers/agents.js';
import { alive } from '../helpers/mcp.js';
import { startServer, type RunningServer } from '../helpers/server.js';

/**
 * A real `hearth serve` killed with SIGKILL while two runs are in flight (one waiting for the
 * model, one for an approval), then started again on the same data directory.
 */
let provider: ScriptedProvider;
let server: RunningServer | undefined;
let dataDir: string;
const workspace = mkdtempSync(join(tmpdir(), 'hearth-crash-ws-'));
const leftovers: number[] = [];

beforeAll(async () => {
  provider = await startScriptedProvider({
    script: (body) =>
      body.messages.at(-1)?.content === 'think'
        ? { content: 'never sent', delayMs: 120_000 }
        : { tool_calls: [{ name: 'write_file', arguments: { path: 'crash.txt', content: 'x' } }] },
  });
  dataDir = await agentDataDir({
    provider,
    agents: [
      { id: 'crasher', model: 'script/scripted', tools: ['write_file'], workspace, tool_policy: { write: 'ask' }, memory: { enabled: false } },
      { id: 'sheller', model: 'script/scripted', tools: ['shell'], workspace, tool_policy: { exec: 'auto' }, memory: { enabled: false } },
    ],
  });
  server = await startServer({ dataDir, withModel: false });
});

afterAll(async () => {
  for (const pid of leftovers) if (alive(pid)) process.kill(pid, 'SIGKILL');
  await server?.stop('SIGKILL');
  await provider?.close();
});

async function json<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(`${server!.url}${path}`, init);
  return (await response.json()) as T;
}

/** Starts a streamed run and returns its id once the given event has arrived. */
async function startRun(input: string, until: string, agent = 'crasher'): Promise<{ runId: string; seen: string[] }> {
  const response = await fetch(`${server!.url}/agents/${agent}/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input, stream: true }),
  });
  const reader = response.body!.getReader();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before ${until}`);
    text += new TextDecoder().decode(value);
    const events = parseEvents(text);
    if (events.some((event) => event.event === until)) {
      void reader.cancel().catch(() => undefined);
      return { runId: events[0]!.data.run_id, seen: events.map((event) => event.event) };
    }
  }
}

describe('a crash during agent runs', () => {
  it('marks the runs in flight failed (interrupted) at the next start, with their events kept', async () => {
    const thinking = await startRun('think', 'run.created');
    const asking = await startRun('write crash.txt', 'tool_call.approval_required');
    expect(asking.seen).toEqual(['run.created', 'tool_call.created', 'tool_call.approval_required']);
    await waitFor(() => (provider.requests.some((request) => request.body.messages.at(-1)?.content === 'think') ? true : undefined));
    const pending = await json<AgentApprovalList>('/agents/approvals');
    expect(pending.data).toHaveLength(1);
    const approvalId = pending.data[0]!.id;
    expect((await json<AgentRun>(`/agents/runs/${asking.runId}`)).status).toBe('awaiting_approval');

    const exit = await server!.stop('SIGKILL');
    expect(exit).toBeNull();
    server = await startServer({ dataDir, withModel: false });

    for (const { runId, seen } of [thinking, asking]) {
      const run = await json<AgentRun>(`/agents/runs/${runId}`);
      expect(run.status).toBe('failed');
      expect(run.error?.code).toBe('interrupted');
      expect(run.completed_at).not.toBeNull();
      const events = await json<AgentRunEventList>(`/agents/runs/${runId}/events`);
      expect(events.run_status).toBe('failed');
      // What was streamed before the crash is still there; a call left open is closed, then one run.failed.
      const closing = runId === asking.runId ? ['tool_call.completed', 'run.failed'] : ['run.failed'];
      expect(events.data.map((event) => event.type)).toEqual([...seen, ...closing]);
      expect(events.data.map((event) => event.sequence)).toEqual([...seen, ...closing].map((_name, index) => index + 1));
    }
    // The call that waited for the owner is in the run record, closed as not finished.
    const asked = await json<AgentRun>(`/agents/runs/${asking.runId}`);
    expect(asked.steps[0]!.tool_calls).toEqual([
      expect.objectContaining({
        name: 'write_file',
        approval_id: approvalId,
        is_error: true,
        output: expect.stringContaining('Hearth stopped during this call'),
      }),
    ]);
    // The approval can no longer be given, and nothing was written.
    expect((await json<AgentApprovalList>('/agents/approvals')).data).toEqual([]);
    const late = await fetch(`${server!.url}/agents/approvals/${approvalId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(late.status).toBe(409);
    expect(existsSync(join(workspace, 'crash.txt'))).toBe(false);

    // The agent runs again after the restart.
    provider.setScript([{ content: 'back again' }]);
    const again = await json<AgentRun>('/agents/crasher/run', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'hello' }),
    });
    expect(again).toMatchObject({ status: 'completed', output_text: 'back again' });
  });

  it('a clean stop (SIGTERM) records the runs in flight as interrupted itself', async () => {
    provider.setScript((body) =>
      body.messages.at(-1)?.content === 'think'
        ? { content: 'never sent', delayMs: 120_000 }
        : { tool_calls: [{ name: 'write_file', arguments: { path: 'x.txt', content: 'x' } }] },
    );
    const asking = await startRun('write x.txt', 'tool_call.approval_required');
    expect(await server!.stop('SIGTERM')).toBe(0);
    server = await startServer({ dataDir, withModel: false });
    const run = await json<AgentRun>(`/agents/runs/${asking.runId}`);
    expect(run.status).toBe('failed');
    expect(run.error).toEqual({ code: 'interrupted', message: 'Hearth was stopped during this run, so it was not finished.' });
    // The stop withdrew the approval: the call ends as not run, then the run.
    const events = await json<AgentRunEventList>(`/agents/runs/${asking.runId}/events`);
    expect(events.data.map((event) => event.type)).toEqual([...asking.seen, 'tool_call.completed', 'run.failed']);
    expect(events.data.at(-2)).toMatchObject({ is_error: true, output: expect.stringContaining('the run was cancelled') });
    expect(existsSync(join(workspace, 'x.txt'))).toBe(false);
  });

  it('a SIGKILL during a shell call: the next start lists the call in the run and ends what the command left running', { timeout: 120_000 }, async () => {
    const pidFile = join(workspace, 'daemon.pid');
    const command = `setsid sh -c 'echo $$ > ${pidFile}; exec sleep 1000' > /dev/null 2>&1 & sleep 1000`;
    provider.setScript([{ tool_calls: [{ id: 'call_shell_crash', name: 'shell', arguments: { command } }] }, { content: 'never' }]);
    const { runId, seen } = await startRun('run it', 'tool_call.created', 'sheller');
    const daemon = await waitFor(() => (existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() ? Number(readFileSync(pidFile, 'utf8')) : undefined));
    leftovers.push(daemon);

    expect(await server!.stop('SIGKILL')).toBeNull();
    // Nothing ended it: Hearth was killed outright.
    expect(alive(daemon)).toBe(true);
    server = await startServer({ dataDir, withModel: false });

    const run = await json<AgentRun>(`/agents/runs/${runId}`);
    expect(run.status).toBe('failed');
    expect(run.steps[0]!.tool_calls).toEqual([
      expect.objectContaining({
        call_id: 'call_shell_crash',
        name: 'shell',
        class: 'exec',
        decision: 'auto',
        is_error: true,
        output: expect.stringContaining('Hearth stopped during this call'),
      }),
    ]);
    const events = await json<AgentRunEventList>(`/agents/runs/${runId}/events`);
    expect(events.data.map((event) => event.type)).toEqual([...seen, 'tool_call.completed', 'run.failed']);
    await waitFor(() => (alive(daemon) ? undefined : true), 30_000, 'the leftover of the shell call to be ended');
  });
});
