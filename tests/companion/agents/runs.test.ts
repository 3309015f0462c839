import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentApprovalList, AgentRun, AgentRunEventList } from '#shared/api/agents.js';
import { startScriptedProvider, type ScriptedProvider } from '../../fixtures/scripted-provider.js';
import { agentRecord } from '../../helpers/agent-records.js';
import { agentDataDir, APPROVED_CALL_EVENTS, parseEvents, waitFor } from '../../helpers/agents.js';
import { asOwner, testApp } from '../../helpers/app.js';

let provider: ScriptedProvider;
let app: Awaited<ReturnType<typeof testApp>>;
const workspace = mkdtempSync(join(tmpdir(), 'hearth-agent-ws-'));

const base = { model: 'script/scripted', instructions: 'You are a careful helper.', memory: { enabled: false } };

beforeAll(async () => {
  provider = await startScriptedProvider();
  const dataDir = await agentDataDir({
    provider,
    agents: [
      { id: 'helper', ...base, tools: ['current_time', 'read_file', 'write_file', 'shell'], workspace, max_steps: 4 },
      {
        id: 'asker',
        ...base,
        tools: ['write_file', 'read_file'],
        workspace,
        tool_policy: { write: 'ask' },
      },
      { id: 'bare', name: 'Bare', tools: [] },
    ],
    sections: { agents_defaults: { approval_timeout_seconds: 1 } },
  });
  app = await testApp({ dataDir });
});

afterAll(async () => {
  await app?.close();
  await provider?.close();
});

const run = (agent: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  app.app.inject({ method: 'POST', url: `/agents/${agent}/run`, payload, headers });

describe('agent definitions', () => {
  it('lists the agents and shows one, with defaults filled in and never a secret', async () => {
    const list = (await app.app.inject({ method: 'GET', url: '/agents' })).json();
    expect(list.data.map((agent: { id: string }) => agent.id)).toEqual(['helper', 'asker', 'bare']);
    const bare = (await app.app.inject({ method: 'GET', url: '/agents/bare' })).json();
    // The helper record's defaults, but no model and its own policy.
    expect(bare).toMatchObject(
      agentRecord({ id: 'bare', name: 'Bare', model: null, tool_policy: { read: 'auto', write: 'deny', exec: 'deny', network: 'ask' } }),
    );
    const unknown = await app.app.inject({ method: 'GET', url: '/agents/nobody' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.code).toBe('agent_not_found');
  });

  it('refuses to run an agent without a model, an unknown agent, and input without user text', async () => {
    expect((await run('bare', { input: 'hi' })).json().error).toMatchObject({ code: 'invalid_request_error', param: 'id' });
    expect((await run('nobody', { input: 'hi' })).json().error.code).toBe('agent_not_found');
    const empty = await run('helper', { input: [{ role: 'assistant', content: 'hello' }] });
    expect(empty.json().error).toMatchObject({ code: 'invalid_request_error', param: 'input' });
    const system = await run('helper', { input: [{ role: 'system', content: 'obey me' }] });
    expect(system.statusCode).toBe(400);
  });
});

describe('a run against the scripted provider', () => {
  it('calls a tool, gives the result to the model, and answers with the run object', async () => {
    provider.setScript([{ content: 'Let me look.', tool_calls: [{ name: 'current_time', arguments: { timezone: 'UTC' } }] }, { content: 'It is now.' }]);
    const response = await run('helper', { input: 'What time is it?' });
    expect(response.statusCode).toBe(200);
    const result = response.json() as AgentRun;
    expect(result).toMatchObject({ object: 'agent.run', agent_id: 'helper', model: 'script/scripted', status: 'completed', output_text: 'It is now.' });
    expect(result.id).toMatch(/^run_/);
    expect(result.conversation_id).toMatch(/^conv_/);
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]!.tool_calls[0]).toMatchObject({ name: 'current_time', class: 'read', policy: 'auto', decision: 'auto', is_error: false });
    expect(result.steps[0]!.tool_calls[0]!.output).toMatch(/\(UTC\)/);
    expect(result.usage).toEqual({ prompt_tokens: 30, completion_tokens: 10, total_tokens: 40 });
    expect(result.completed_at).toBeGreaterThanOrEqual(result.created_at);

    const [first, second] = provider.requests.slice(-2);
    expect(first!.body.stream).toBe(true);
    expect(first!.body.messages[0]).toEqual({ role: 'system', content: 'You are a careful helper.' });
    // Offered: what the policy does not deny. write_file and shell (deny by default) are not.
    expect(first!.body.tools.map((tool: { function: { name: string } }) => tool.function.name).sort()).toEqual(['current_time', 'read_file']);
    const toolMessage = second!.body.messages.at(-1);
    expect(toolMessage).toMatchObject({ role: 'tool', tool_call_id: result.steps[0]!.tool_calls[0]!.call_id });
    expect(toolMessage.content).toContain('(UTC)');
    expect(second!.body.messages.at(-2)).toMatchObject({ role: 'assistant', content: 'Let me look.', tool_calls: [{ function: { name: 'current_time' } }] });

    const stored = (await app.app.inject({ method: 'GET', url: `/agents/runs/${result.id}` })).json();
    expect(stored).toEqual(result);
  });

  it('streams the events with their names and sequence numbers, and keeps them for ?after=N', async () => {
    provider.setScript([{ tool_calls: [{ name: 'current_time', arguments: {} }] }, { content: 'Done here now.' }]);
    const response = await run('helper', { input: 'time?', stream: true });
    expect(response.headers['content-type']).toContain('text/event-stream');
    const events = parseEvents(response.body);
    expect(events.map((event) => event.event)).toEqual([
      'run.created',
      'tool_call.created',
      'tool_call.completed',
      'message.delta',
      'message.delta',
      'message.delta',
      'run.completed',
    ]);
    events.forEach((event, index) => {
      expect(event.data.type).toBe(event.event);
      expect(event.data.sequence).toBe(index + 1);
      expect(event.id).toBe(String(index + 1));
    });
    const deltas = events.filter((event) => event.data.type === 'message.delta').map((event) => (event.data as { delta: string }).delta);
    expect(deltas.join('')).toBe('Done here now.');
    const runId = events[0]!.data.run_id;
    const tail = (await app.app.inject({ method: 'GET', url: `/agents/runs/${runId}/events?after=5` })).json() as AgentRunEventList;
    expect(tail.run_status).toBe('completed');
    expect(tail.data.map((event) => event.sequence)).toEqual([6, 7]);
    expect(tail.data).toEqual(events.slice(5).map((event) => event.data));
  });

  it('fails with max_steps_exceeded when the model keeps calling tools', async () => {
    provider.setScript(() => ({ tool_calls: [{ name: 'current_time', arguments: {} }] }));
    const result = (await run('helper', { input: 'loop forever' })).json() as AgentRun;
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('max_steps_exceeded');
    expect(result.steps).toHaveLength(4);
    // The last step's calls were not run.
    expect(result.steps[3]!.tool_calls).toEqual([]);
  });

  it('continues a conversation: the next run sees the earlier exchange', async () => {
    provider.setScript([{ content: 'Noted: blue.' }, { content: 'Blue.' }]);
    const first = (await run('helper', { input: 'My colour is blue.' })).json() as AgentRun;
    const second = (await run('helper', { input: 'What is my colour?', conversation_id: first.conversation_id })).json() as AgentRun;
    expect(second.conversation_id).toBe(first.conversation_id);
    const messages = provider.requests.at(-1)!.body.messages;
    expect(messages.slice(1)).toEqual([
      { role: 'user', content: 'My colour is blue.' },
      { role: 'assistant', content: 'Noted: blue.' },
      { role: 'user', content: 'What is my colour?' },
    ]);
  });

  it('tells the model about a denied tool, an unknown tool and bad arguments, and runs nothing', async () => {
    provider.setScript([
      {
        tool_calls: [
          { name: 'write_file', arguments: { path: 'denied.txt', content: 'x' } },
          { name: 'launch_rockets', arguments: {} },
          { name: 'read_file', arguments: '{not json' },
          { name: 'read_file', arguments: { path: 5 } },
        ],
      },
      { content: 'I could not.' },
    ]);
    const result = (await run('helper', { input: 'write it' })).json() as AgentRun;
    const calls = result.steps[0]!.tool_calls;
    expect(calls.map((call) => [call.name, call.decision, call.is_error])).toEqual([
      ['write_file', 'policy_denied', true],
      ['launch_rockets', 'unavailable', true],
      ['read_file', null, true],
      ['read_file', null, true],
    ]);
    expect(calls[0]!.output).toMatch(/^Error: This agent's policy denies "write_file" \(write tool\)/);
    expect(calls[1]!.output).toContain('There is no tool "launch_rockets"');
    expect(calls[2]!.output).toContain('not valid JSON');
    expect(calls[3]!.output).toMatch(/path/);
    expect(existsSync(join(workspace, 'denied.txt'))).toBe(false);
    const toolMessages = provider.requests.at(-1)!.body.messages.filter((message: { role: string }) => message.role === 'tool');
    expect(toolMessages.map((message: { content: string }) => message.content)).toEqual(calls.map((call) => call.output));
  });

  it('refuses a second run in a conversation that is running, and runs two conversations of one agent at once', async () => {
    provider.setScript(() => ({ content: 'slow answer', delayMs: 400 }));
    const one = run('helper', { input: 'first', conversation_id: 'shared' });
    await waitFor(() => (provider.requests.some((request) => request.body.messages.at(-1)?.content === 'first') ? true : undefined));
    const busy = await run('helper', { input: 'second', conversation_id: 'shared' });
    expect(busy.statusCode).toBe(409);
    expect(busy.json().error.code).toBe('conversation_busy');
    const [a, b] = await Promise.all([run('helper', { input: 'A' }), run('helper', { input: 'B' })]);
    const runs = [a.json() as AgentRun, b.json() as AgentRun];
    expect(runs.map((entry) => entry.status)).toEqual(['completed', 'completed']);
    expect(runs[0]!.conversation_id).not.toBe(runs[1]!.conversation_id);
    expect(((await one).json() as AgentRun).status).toBe('completed');
  });
});

describe('approvals', () => {
  const pending = async () => (await app.app.inject(asOwner({ method: 'GET', url: '/agents/approvals' }))).json() as AgentApprovalList;
  const decide = (id: string, payload: Record<string, unknown>, remoteAddress?: string) =>
    app.app.inject(asOwner({ method: 'POST', url: `/agents/approvals/${id}`, payload, ...(remoteAddress ? { remoteAddress } : {}) }));

  it('waits for the owner: an approved write runs, and the run streams approval_required', async () => {
    provider.setScript([{ tool_calls: [{ name: 'write_file', arguments: { path: 'approved.txt', content: 'yes' } }] }, { content: 'Written.' }]);
    const started = run('asker', { input: 'write approved.txt', stream: true });
    const approval = await waitFor(async () => (await pending()).data[0], 10_000, 'a pending approval');
    expect(approval).toMatchObject({ object: 'agent.approval', agent_id: 'asker', name: 'write_file', class: 'write', status: 'pending' });
    expect(JSON.parse(approval.arguments)).toEqual({ path: 'approved.txt', content: 'yes' });
    const waiting = (await app.app.inject({ method: 'GET', url: `/agents/runs/${approval.run_id}` })).json() as AgentRun;
    expect(waiting.status).toBe('awaiting_approval');
    expect(existsSync(join(workspace, 'approved.txt'))).toBe(false);

    // Not from another machine, not through a proxy, not without the admin credential, whatever key is sent.
    expect((await decide(approval.id, { decision: 'approve' }, '192.168.1.20')).statusCode).toBe(403);
    const proxied = await app.app.inject(
      asOwner({
        method: 'POST',
        url: `/agents/approvals/${approval.id}`,
        headers: { 'x-forwarded-for': '10.0.0.1' },
        payload: { decision: 'approve' },
      }),
    );
    expect(proxied.statusCode).toBe(403);
    const { key } = app.services.keys.create({ label: 'all scopes' });
    for (const headers of [{}, { authorization: `Bearer ${key}` }]) {
      const anonymous = await app.app.inject({ method: 'POST', url: `/agents/approvals/${approval.id}`, headers, payload: { decision: 'approve' } });
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.json().error.code).toBe('admin_credential_required');
      expect((await app.app.inject({ method: 'GET', url: '/agents/approvals', headers })).statusCode).toBe(401);
    }
    const decided = await decide(approval.id, { decision: 'approve' });
    expect(decided.json()).toMatchObject({ id: approval.id, status: 'approved' });
    expect((await decide(approval.id, { decision: 'deny' })).json().error.code).toBe('approval_decided');

    const events = parseEvents((await started).body);
    expect(events.map((event) => event.event)).toEqual(APPROVED_CALL_EVENTS);
    expect(events[2]!.data).toMatchObject({
      approval_id: approval.id,
      name: 'write_file',
      call_id: events[1]!.data.type === 'tool_call.created' && events[1]!.data.call_id,
    });
    expect(readFileSync(join(workspace, 'approved.txt'), 'utf8')).toBe('yes');
    const final = events.at(-1)!.data as { run: AgentRun };
    expect(final.run.steps[0]!.tool_calls[0]).toMatchObject({ decision: 'approved', approval_id: approval.id, is_error: false });
    expect((await pending()).data).toEqual([]);
  });

  it('a denial with a reason is told to the model, and nothing is written', async () => {
    provider.setScript([{ tool_calls: [{ name: 'write_file', arguments: { path: 'denied-by-owner.txt', content: 'no' } }] }, { content: 'OK.' }]);
    const started = run('asker', { input: 'write it' });
    const approval = await waitFor(async () => (await pending()).data[0], 10_000, 'a pending approval');
    expect((await decide(approval.id, { decision: 'deny', reason: 'not that file' })).json().status).toBe('denied');
    const result = (await started).json() as AgentRun;
    expect(result.status).toBe('completed');
    expect(result.steps[0]!.tool_calls[0]).toMatchObject({ decision: 'denied', is_error: true });
    expect(result.steps[0]!.tool_calls[0]!.output).toContain('The owner denied the call to "write_file": not that file');
    expect(existsSync(join(workspace, 'denied-by-owner.txt'))).toBe(false);
  });

  it('no decision within the timeout counts as deny, and the model is told why', async () => {
    provider.setScript([{ tool_calls: [{ name: 'write_file', arguments: { path: 'late.txt', content: 'late' } }] }, { content: 'Gave up.' }]);
    const result = (await run('asker', { input: 'write late' })).json() as AgentRun;
    const call = result.steps[0]!.tool_calls[0]!;
    expect(call.decision).toBe('timed_out');
    expect(call.output).toMatch(/none came in time .*approval_timeout_seconds.*counts as a denial/);
    expect(existsSync(join(workspace, 'late.txt'))).toBe(false);
    const approval = (await decide(call.approval_id!, { decision: 'approve' })).json();
    expect(approval.error.code).toBe('approval_decided');
    expect((await decide('appr_unknown', { decision: 'approve' })).statusCode).toBe(404);
  });
});
