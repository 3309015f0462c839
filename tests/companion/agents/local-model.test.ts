import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentApprovalList, AgentRun } from '#shared/api/agents.js';
import { agentDataDir, parseEvents, waitFor } from '../../helpers/agents.js';
import { asOwner, testApp } from '../../helpers/app.js';

/**
 * The tiny generated model through the real engine: with tool_choice `required` the first model
 * call is a tool call forced by a grammar built from the tool's schema; the loop runs the tool,
 * gives the result back, and the next (free) call answers in text.
 */
let app: Awaited<ReturnType<typeof testApp>>;

beforeAll(async () => {
  const local = { model: 'tiny', tool_choice: 'required', tools: ['current_time'], max_tokens: 160, temperature: 0, memory: { enabled: false }, max_steps: 3 };
  const dataDir = await agentDataDir({
    withModel: true,
    agents: [
      { id: 'local', ...local },
      { id: 'local-asker', ...local, tool_overrides: { current_time: 'ask' } },
    ],
    sections: { models: { threads: 1, parallel: 2 } },
  });
  app = await testApp({ dataDir });
});

afterAll(async () => {
  await app?.close();
});

describe('an agent on a local model', () => {
  it('makes a grammar-forced tool call, runs it, and answers', async () => {
    const response = await app.app.inject({ method: 'POST', url: '/agents/local/run', payload: { input: 'What time is it?' } });
    const run = response.json() as AgentRun;
    expect(run).toMatchObject({ status: 'completed', model: 'tiny' });
    expect(run.steps).toHaveLength(2);
    const call = run.steps[0]!.tool_calls[0]!;
    expect(call).toMatchObject({ name: 'current_time', class: 'read', decision: 'auto' });
    expect(call.call_id).toMatch(/^call_/);
    // Whatever the random weights chose for the optional argument, the arguments are valid JSON for the schema.
    expect(typeof JSON.parse(call.arguments)).toBe('object');
    expect(run.steps[1]!.tool_calls).toEqual([]);
    expect(run.output_text).toBe(run.steps[1]!.text);
    expect(run.usage.completion_tokens).toBeGreaterThan(0);
    expect(run.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('streams the same run as events', async () => {
    const response = await app.app.inject({ method: 'POST', url: '/agents/local/run', payload: { input: 'Time?', stream: true } });
    const names = parseEvents(response.body).map((event) => event.event);
    expect(names.slice(0, 3)).toEqual(['run.created', 'tool_call.created', 'tool_call.completed']);
    expect(names.at(-1)).toBe('run.completed');
    expect(names.filter((name) => name === 'message.delta').length).toBeGreaterThan(0);
  });

  it('waits for an approval before running the forced call', async () => {
    const started = app.app.inject({ method: 'POST', url: '/agents/local-asker/run', payload: { input: 'Time, please.' } });
    const approval = await waitFor(
      async () => ((await app.app.inject(asOwner({ method: 'GET', url: '/agents/approvals' }))).json() as AgentApprovalList).data[0],
      60_000,
      'an approval',
    );
    expect(approval).toMatchObject({ agent_id: 'local-asker', name: 'current_time', class: 'read' });
    await app.app.inject(asOwner({ method: 'POST', url: `/agents/approvals/${approval.id}`, payload: { decision: 'approve' } }));
    const run = (await started).json() as AgentRun;
    expect(run.status).toBe('completed');
    expect(run.steps[0]!.tool_calls[0]).toMatchObject({ decision: 'approved', approval_id: approval.id });
  });
});
