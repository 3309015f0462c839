import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentApprovalList, AgentList, AgentRun, AgentRunEvent } from '#shared/api/agents.js';
import type { PairingCode } from '#shared/api/remote.js';
import { readEvents } from '../../companion/src/sse-reader.js';
import { startScriptedProvider, type ScriptedProvider } from '../fixtures/scripted-provider.js';
import { APPROVED_CALL_EVENTS, waitFor } from '../helpers/agents.js';
import { channelRequest, deviceCredential, freePort, hostCertificate, startPaired, stopPaired } from '../helpers/remote.js';
import { send, startServer, type RunningServer } from '../helpers/server.js';

/*
 * Remote runs between two real `hearth serve` processes on 127.0.0.1: the device pairs with the
 * host, lists the granted agent as `<host>/<agent>`, runs it with its events streamed over mutual
 * TLS, while the approval is decided on the host; cancel goes through; revoking the device cuts
 * an open stream.
 */

let provider: ScriptedProvider;
let host: RunningServer;
let device: RunningServer;
let channelUrl: string;
let channelPort: number;
const workspace = mkdtempSync(join(tmpdir(), 'hearth-remote-ws-'));

beforeAll(async () => {
  provider = await startScriptedProvider();
  const agent = { model: 'script/scripted', tools: ['write_file'], workspace, tool_policy: { write: 'ask' }, memory: { enabled: false } };
  channelPort = await freePort();
  let pairing: PairingCode;
  ({ host, device, pairing } = await startPaired({
    port: channelPort,
    config: {
      providers: [{ name: 'script', base_url: provider.baseUrl, models: ['scripted'] }],
      agents: [
        { id: 'asker', ...agent },
        { id: 'private', ...agent },
      ],
    },
    agents: ['asker'],
  }));
  channelUrl = pairing.url;
});

afterAll(async () => {
  await stopPaired({ host, device });
  await provider?.close();
  rmSync(workspace, { recursive: true, force: true });
});

/** Starts a run on the device and reads its events as they come. */
function deviceRun(agent: string, input: string) {
  const events: AgentRunEvent[] = [];
  const done = (async () => {
    const response = await fetch(`${device.url}/agents/${encodeURIComponent(agent)}/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ input, stream: true }),
    });
    expect(response.status).toBe(200);
    for await (const event of readEvents(response.body)) events.push(JSON.parse(event.data) as AgentRunEvent);
    return events;
  })();
  return { events, done };
}

const pendingOnHost = async () => ((await (await fetch(`${host.url}/agents/approvals`)).json()) as AgentApprovalList).data;

function identity() {
  const credential = deviceCredential(device, 'home');
  return { ca: hostCertificate(host), key: credential.key, cert: credential.certificate };
}

describe('a paired host’s agents on the device', () => {
  it('lists only the granted agent, as <host>/<agent> with source remote, next to the local ones', async () => {
    const listed = (await (await fetch(`${device.url}/agents`)).json()) as AgentList;
    expect(listed.data.map((agent) => [agent.id, agent.source])).toEqual([['home/asker', 'remote']]);
    expect(listed.data[0]).toMatchObject({ model: 'script/scripted', workspace: null, tool_policy: { write: 'ask' } });
    const one = (await (await fetch(`${device.url}/agents/home%2Fasker`)).json()) as AgentList['data'][number];
    expect(one).toMatchObject({ id: 'home/asker', source: 'remote' });
    expect((await fetch(`${device.url}/agents/home%2Fprivate`)).status).toBe(400);
  });

  it('runs it with events streamed over mutual TLS; the approval is decided on the host', async () => {
    provider.setScript([{ tool_calls: [{ name: 'write_file', arguments: { path: 'remote.txt', content: 'from afar' } }] }, { content: 'Written.' }]);
    const run = deviceRun('home/asker', 'write remote.txt');
    const approval = await waitFor(async () => (await pendingOnHost())[0], 15_000, 'the approval on the host');
    expect(approval).toMatchObject({ agent_id: 'asker', name: 'write_file', status: 'pending' });
    await waitFor(() => run.events.find((event) => event.type === 'tool_call.approval_required'), 10_000, 'approval_required on the device');
    expect(existsSync(join(workspace, 'remote.txt'))).toBe(false);
    // The device cannot decide it: approvals do not exist on the channel.
    const refused = await channelRequest(channelUrl, `/agents/approvals/${approval.id}`, { ...identity(), method: 'POST', body: { decision: 'approve' } });
    expect(refused.status).toBe(404);
    const decided = await send(host, `/agents/approvals/${approval.id}`, { body: { decision: 'approve' } });
    expect(decided.status).toBe(200);

    const events = await run.done;
    expect(events.map((event) => event.type)).toEqual(APPROVED_CALL_EVENTS);
    expect(events.map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(events[2]).toMatchObject({ approval_id: approval.id, name: 'write_file' });
    expect(readFileSync(join(workspace, 'remote.txt'), 'utf8')).toBe('from afar');
    const final = (events.at(-1) as { run: AgentRun }).run;
    expect(final).toMatchObject({ agent_id: 'home/asker', status: 'completed', output_text: 'Written.' });
    expect(final.steps[0]!.tool_calls[0]).toMatchObject({ decision: 'approved', approval_id: approval.id });

    // The device keeps the run like a local one; the host keeps its own, which only this device may read.
    const kept = (await (await fetch(`${device.url}/agents/runs/${final.id}`)).json()) as AgentRun;
    expect(kept).toMatchObject({ status: 'completed', output_text: 'Written.' });
    expect((events[0] as { run: AgentRun }).run.id).toBe(final.id);
    expect(approval.run_id).not.toBe(final.id);
    const own = await channelRequest(channelUrl, `/agents/runs/${approval.run_id}`, identity());
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ agent_id: 'asker', status: 'completed' });
    const ownEvents = await channelRequest(channelUrl, `/agents/runs/${approval.run_id}/events?after=4`, identity());
    expect(ownEvents.body.data.map((event: AgentRunEvent) => event.type)).toEqual(['message.delta', 'run.completed']);
  });

  it('the channel refuses an agent not granted and runs the device did not start', async () => {
    const other = await channelRequest(channelUrl, '/agents/private/run', { ...identity(), method: 'POST', body: { input: 'hi' } });
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('permission_denied');
    provider.setScript([{ content: 'local answer' }]);
    const local = (await (await send(host, '/agents/asker/run', { body: { input: 'hello' } })).json()) as AgentRun;
    expect(local.status).toBe('completed');
    for (const path of [`/agents/runs/${local.id}`, `/agents/runs/${local.id}/events`]) {
      const answer = await channelRequest(channelUrl, path, identity());
      expect(answer.status, path).toBe(404);
      expect(answer.body.error.code).toBe('run_not_found');
    }
    expect((await channelRequest(channelUrl, `/agents/runs/${local.id}/cancel`, { ...identity(), method: 'POST' })).status).toBe(404);
    // Nor may it continue the host's own conversation.
    const joined = await channelRequest(channelUrl, '/agents/asker/run', {
      ...identity(),
      method: 'POST',
      body: { input: 'and?', conversation_id: local.conversation_id },
    });
    expect(joined.status).toBe(400);
    expect(joined.body.error.param).toBe('conversation_id');
  });

  it('a key scoped to a local agent named like the host never reaches the host’s agents', async () => {
    const created = await send(device, '/admin/keys', { body: { label: 'home only', agent: 'home' } });
    expect(created.status).toBe(201);
    const { key } = (await created.json()) as { key: string };
    provider.setScript([{ content: 'should never run' }]);
    const requestsBefore = provider.requests.length;
    for (const path of ['home%2Fasker', 'home%2fasker', 'home%252Fasker']) {
      const response = await fetch(`${device.url}/agents/${path}/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ input: 'hello' }),
      });
      expect(response.status, path).toBe(403);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('permission_denied');
    }
    expect(provider.requests.length, 'no run reached the host’s model').toBe(requestsBefore);
  });

  it('cancelling on the device cancels the run on the host', async () => {
    provider.setScript([{ tool_calls: [{ name: 'write_file', arguments: { path: 'never.txt', content: 'no' } }] }, { content: 'unused' }]);
    const run = deviceRun('home/asker', 'write never.txt');
    const approval = await waitFor(async () => (await pendingOnHost())[0], 15_000, 'the approval on the host');
    const created = await waitFor(() => run.events.find((event) => event.type === 'run.created'), 10_000, 'run.created');
    const cancelled = (await (await fetch(`${device.url}/agents/runs/${created.run_id}/cancel`, { method: 'POST' })).json()) as AgentRun;
    expect(cancelled.status).toBe('cancelled');
    expect((await run.done).at(-1)!.type).toBe('run.cancelled');
    const onHost = await channelRequest(channelUrl, `/agents/runs/${approval.run_id}`, identity());
    expect(onHost.body.status).toBe('cancelled');
    expect(existsSync(join(workspace, 'never.txt'))).toBe(false);
  });
});

describe('a cut stream', () => {
  it('is picked up again from the last event when the host comes back', async () => {
    provider.setScript([{ tool_calls: [{ name: 'write_file', arguments: { path: 'crash.txt', content: 'no' } }] }, { content: 'unused' }]);
    const run = deviceRun('home/asker', 'write crash.txt');
    await waitFor(() => run.events.find((event) => event.type === 'tool_call.approval_required'), 15_000, 'approval_required on the device');
    // The host dies mid-run and starts again on the same channel: it closes the open call and marks the run interrupted, and the device reads that.
    await host.stop('SIGKILL');
    host = await startServer({ dataDir: host.dataDir, withModel: false });
    const events = await run.done;
    expect(events.map((event) => event.type)).toEqual(['run.created', 'tool_call.created', 'tool_call.approval_required', 'tool_call.completed', 'run.failed']);
    expect((events.at(-1) as { error: { code: string } }).error.code).toBe('interrupted');
  });
});

describe('revocation', () => {
  it('cuts an open stream at once; the device then says it is no longer paired', async () => {
    provider.setScript([{ tool_calls: [{ name: 'write_file', arguments: { path: 'cut.txt', content: 'no' } }] }, { content: 'unused' }]);
    const run = deviceRun('home/asker', 'write cut.txt');
    await waitFor(() => run.events.find((event) => event.type === 'tool_call.approval_required'), 15_000, 'approval_required on the device');
    const { device_id } = deviceCredential(device, 'home');
    expect((await fetch(`${host.url}/admin/devices/${device_id}`, { method: 'DELETE' })).status).toBe(200);
    const events = await run.done;
    const end = events.at(-1)!;
    expect(end.type).toBe('run.failed');
    expect((end as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'remote_host_not_paired',
      message: expect.stringMatching(/stopped accepting this device during the run/),
    });
    const again = await send(device, '/agents/home%2Fasker/run', { body: { input: 'hello?' } });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'remote_host_not_paired',
      message: expect.stringMatching(/no longer accepts this device/),
    });
    expect(((await (await fetch(`${device.url}/agents`)).json()) as AgentList).data).toEqual([]);
  });
});
