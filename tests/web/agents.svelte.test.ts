import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clearKeyRefusal, takesKey } from '$lib/api/client';
import { storeAccessKey } from '$lib/storage/access-key';
import { defaultModel, draftOf, settingsOf } from '$lib/stores/agent-draft';
import { applyEvent, runFigures, type RunView } from '$lib/stores/agent-runs';
import { AgentsStore } from '$lib/stores/agents.svelte';
import { session } from '$lib/stores/session.svelte';
import type { AgentRun, AgentRunEvent } from '#shared/api/agents.js';
import { agentRecord, agentRun } from '../helpers/agent-records.js';
import { stubFetch } from '../helpers/fetch-stub.js';
import { modelRecord } from '../helpers/model-record.js';

const error = (status: number, code: string, message = code) =>
  Response.json({ error: { message, type: 'invalid_request_error', code, param: null } }, { status });

beforeEach(() => {
  localStorage.clear();
  clearKeyRefusal();
});

afterEach(() => {
  vi.unstubAllGlobals();
});

const record = agentRecord({
  instructions: 'Be brief.',
  tools: ['read_file', 'everything_*'],
  tool_overrides: { read_file: 'ask', shell: 'auto' },
  workspace: '/work',
});

const run = (status: AgentRun['status'], extra: Partial<AgentRun> = {}): AgentRun =>
  agentRun('run_1', { status, input: [{ role: 'user', content: 'Do it' }], ...extra });

const events: AgentRunEvent[] = [
  { type: 'run.created', sequence: 1, run_id: 'run_1', run: run('running') },
  { type: 'message.delta', sequence: 2, run_id: 'run_1', step: 0, delta: 'Let me ' },
  { type: 'message.delta', sequence: 3, run_id: 'run_1', step: 0, delta: 'check.' },
  { type: 'tool_call.created', sequence: 4, run_id: 'run_1', step: 0, call_id: 'call_a', name: 'write_file', arguments: '{"path":"a"}' },
  {
    type: 'tool_call.approval_required',
    sequence: 5,
    run_id: 'run_1',
    step: 0,
    approval_id: 'appr_1',
    call_id: 'call_a',
    name: 'write_file',
    arguments: '{"path":"a"}',
    expires_at: 99,
  },
];

describe('the run view', () => {
  it('is built from events: text per step, tool calls, an approval waiting, and the end', () => {
    let view: RunView | null = null;
    for (const event of events) view = applyEvent(view, event);
    expect(view).toMatchObject({ id: 'run_1', status: 'awaiting_approval', input: 'Do it', sequence: 5 });
    expect(view!.steps).toEqual([
      {
        index: 0,
        text: 'Let me check.',
        calls: [
          {
            callId: 'call_a',
            name: 'write_file',
            arguments: '{"path":"a"}',
            output: null,
            isError: false,
            approval: { id: 'appr_1', expiresAt: 99, decided: false },
          },
        ],
      },
    ]);
    // A replayed event changes nothing.
    expect(applyEvent(view, events[2]!)).toBe(view);
    view = applyEvent(view, {
      type: 'tool_call.completed',
      sequence: 6,
      run_id: 'run_1',
      step: 0,
      call_id: 'call_a',
      name: 'write_file',
      output: 'Wrote',
      is_error: false,
    });
    expect(view.status).toBe('running');
    expect(view.steps[0]!.calls[0]).toMatchObject({ output: 'Wrote', approval: { decided: true } });
    const failed = run('failed', { error: { code: 'max_steps_exceeded', message: 'Too many steps.' } });
    view = applyEvent(view, { type: 'run.failed', sequence: 7, run_id: 'run_1', run: failed, error: failed.error! });
    // In words: the code is for programs, not people.
    expect(view).toMatchObject({ status: 'failed', error: 'Too many steps.', sequence: 7 });
  });

  it('says what a run used and how long it took', () => {
    const usage = { prompt_tokens: 1000, completion_tokens: 234, total_tokens: 1234 };
    expect(runFigures({ usage, createdAt: 100, completedAt: 103 })).toBe('1,234 tokens (1,000 prompt, 234 written) · 3 s');
    expect(runFigures({ usage, createdAt: 100, completedAt: 225 })).toBe('1,234 tokens (1,000 prompt, 234 written) · 2 min 5 s');
    expect(runFigures({ usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, createdAt: 100, completedAt: null })).toBe('');
  });
});

describe('the agent draft', () => {
  it('round-trips a definition and drops overrides of tools it no longer lists', () => {
    const draft = draftOf(record);
    expect(draft).toMatchObject({ id: 'helper', name: 'Helper', model: 'tiny', budget_tokens: null, temperature: null, workspace: '/work' });
    draft.tools = ['everything_*'];
    draft.tool_overrides = { ...draft.tool_overrides, everything_echo: 'deny' };
    draft.temperature = 0.3;
    draft.max_tokens = 512;
    expect(settingsOf(draft)).toEqual({
      id: 'helper',
      name: 'Helper',
      instructions: 'Be brief.',
      model: 'tiny',
      tools: ['everything_*'],
      tool_policy: record.tool_policy,
      tool_overrides: { everything_echo: 'deny' },
      tool_choice: 'auto',
      memory: { enabled: true },
      workspace: '/work',
      max_steps: 30,
      temperature: 0.3,
      max_tokens: 512,
    });
    draft.max_tokens = null;
    expect(settingsOf(draft)).not.toHaveProperty('max_tokens');
  });

  it('starts a new agent with the loaded model, else the only one, else none', () => {
    const model = modelRecord;
    expect(defaultModel([model('a'), model('b', { loaded: true })])).toBe('b');
    expect(defaultModel([model('only')])).toBe('only');
    expect(defaultModel([model('a'), model('b')])).toBe('');
    expect(defaultModel([model('embed', { capabilities: ['embedding'], loaded: true }), model('chat')])).toBe('chat');
    expect(defaultModel([])).toBe('');
  });
});

describe('AgentsStore', () => {
  it('asks for confirmation of a high-risk save, then applies it confirmed', async () => {
    const bodies: any[] = [];
    stubFetch((path, init) => {
      if (path === '/admin/config/apply') {
        const body = JSON.parse(String(init.body));
        bodies.push(body);
        return body.confirm_high_risk ? Response.json({ applied: true, changes: [], risks: [], restart_required: [] }) : error(409, 'confirmation_required');
      }
      if (path === '/admin/config/plan')
        return Response.json({ valid: true, changes: [], risks: [{ level: 'high', code: 'grants_write', path: 'agents.helper', message: 'Writes.' }] });
      if (path === '/agents') return Response.json({ object: 'list', data: [record] });
      if (path === '/admin/session') return Response.json({ signed_in: true });
      return error(404, 'route_not_found');
    });
    const store = new AgentsStore();
    store.newAgent();
    store.draft!.id = 'helper';
    expect(await store.save()).toBe(false);
    expect(store.risks).toEqual([expect.objectContaining({ code: 'grants_write', message: 'Writes.' })]);
    expect(await store.save(true)).toBe(true);
    expect(bodies.map((body) => body.confirm_high_risk)).toEqual([false, true]);
    expect(bodies[1].document).toEqual({ version: 1, agents: [expect.objectContaining({ id: 'helper' })] });
    expect(store.draft).toBeNull();
    expect(store.selectedId).toBe('helper');
  });

  it('deletes an agent by applying the exported configuration without it, pruned and confirmed', async () => {
    let applied: any;
    stubFetch((path, init) => {
      if (path === '/admin/config/export?format=json') return Response.json({ version: 1, agents: [{ id: 'helper' }, { id: 'keep' }], server: { port: 1 } });
      if (path === '/admin/config/apply') return Response.json((applied = JSON.parse(String(init.body))));
      return Response.json({ object: 'list', data: [] });
    });
    await new AgentsStore().remove('helper');
    expect(applied).toEqual({ document: { version: 1, agents: [{ id: 'keep' }], server: { port: 1 } }, prune: true, confirm_high_risk: true });
  });

  it('asks for approvals only once signed in, counts them, and stops where they are refused (another machine)', async () => {
    session.markSignedOut();
    const fetch = stubFetch(() => Response.json({ object: 'list', data: [{ id: 'appr_1' }, { id: 'appr_2' }] }));
    const store = new AgentsStore();
    await store.refreshApprovals();
    expect(store.pendingCount).toBe(0);
    expect(store.approvalsError).toMatch(/^Sign in to see approvals. To sign in, run npm run hearth -- open/);
    // Not signed in: not one request that would be refused.
    expect(fetch).not.toHaveBeenCalled();
    session.markSignedIn();
    await store.refreshApprovals();
    await store.refreshApprovals();
    expect(store.pendingCount).toBe(2);
    expect(fetch.mock.calls.map(([path]) => String(path))).toEqual(['/agents/approvals', '/agents/approvals']);
    // Signed out elsewhere: the refusal clears the note, and nothing is asked until signing in again.
    const refusing = stubFetch(() => error(401, 'admin_credential_required'));
    await store.refreshApprovals();
    expect(store.pendingCount).toBe(0);
    expect(store.signedIn).toBe(false);
    await store.refreshApprovals();
    expect(refusing).toHaveBeenCalledTimes(1);
    // Another machine: the companion refuses the owner's routes outright.
    session.markSignedIn();
    stubFetch(() => error(403, 'permission_denied'));
    await store.refreshApprovals();
    expect(store.approvalsAvailable).toBe(false);
    expect(store.approvalsError).toBe('Only the machine the companion runs on can see approvals.');
  });

  it('streams a run onto the screen', async () => {
    const stream = [...events.slice(0, 3), { type: 'run.completed', sequence: 4, run_id: 'run_1', run: run('completed', { output_text: 'Done.' }) }]
      .map((event) => `event: ${event.type}\nid: ${event.sequence}\ndata: ${JSON.stringify(event)}\n\n`)
      .join('');
    const fetch = stubFetch((path) => {
      if (path === '/agents/helper/run') return new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
      return Response.json({ object: 'list', data: [], has_more: false });
    });
    const store = new AgentsStore();
    store.selectedId = 'helper';
    await store.start('Do it');
    expect(store.run).toMatchObject({ status: 'completed', output: 'Done.' });
    expect(store.following).toBe(false);
    const [, init] = fetch.mock.calls.find(([path]) => String(path) === '/agents/helper/run')!;
    expect(JSON.parse(String(init!.body))).toEqual({ input: 'Do it', stream: true });
  });

  it('never sends the access key to the approvals routes', () => {
    storeAccessKey('hth_abcdefghijklmnop');
    expect(takesKey('/agents/helper/run')).toBe(true);
    expect(takesKey('/agents/approvals')).toBe(false);
    expect(takesKey('/agents/approvals/appr_1')).toBe(false);
    expect(takesKey('/agents/approvalsx')).toBe(true);
  });
});
