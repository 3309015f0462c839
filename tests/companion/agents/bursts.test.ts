import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentRun, AgentRunEvent } from '#shared/api/agents.js';
import { MAX_TOOL_CALLS_PER_STEP } from '../../../companion/src/agents/loop.js';
import { startScriptedProvider, type ScriptedProvider } from '../../fixtures/scripted-provider.js';
import { agentRun } from '../../helpers/agent-records.js';
import { agentDataDir, parseEvents } from '../../helpers/agents.js';
import { testApp } from '../../helpers/app.js';

/**
 * A model reply with thousands of tool calls, and a run with 10,000 events: the first runs only
 * the capped number of calls (the rest answered as errors) and finishes; the second is replayed
 * in pages, with other work (a timer) served in between.
 */
let provider: ScriptedProvider;
let app: Awaited<ReturnType<typeof testApp>>;
let base: string;

beforeAll(async () => {
  provider = await startScriptedProvider();
  const dataDir = await agentDataDir({
    provider,
    agents: [{ id: 'burst', model: 'script/scripted', memory: { enabled: false }, tools: ['current_time'] }],
  });
  app = await testApp({ dataDir, withModel: false });
  base = await app.app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app?.close();
  await provider?.close();
});

describe('a reply with thousands of tool calls', () => {
  it(`runs the first ${MAX_TOOL_CALLS_PER_STEP}, answers the rest with an error naming the cap, and finishes`, { timeout: 120_000 }, async () => {
    const count = 3000;
    provider.setScript([
      { tool_calls: Array.from({ length: count }, (_value, index) => ({ id: `call_${index}`, name: 'current_time', arguments: { timezone: 'UTC' } })) },
      { content: 'done' },
    ]);
    const response = await app.app.inject({ method: 'POST', url: '/agents/burst/run', payload: { input: 'all at once' } });
    const run = response.json() as AgentRun;
    expect(run.status).toBe('completed');
    const calls = run.steps[0]!.tool_calls;
    expect(calls).toHaveLength(count);
    expect(calls.map((call) => call.call_id)).toEqual(Array.from({ length: count }, (_value, index) => `call_${index}`));
    const ran = calls.slice(0, MAX_TOOL_CALLS_PER_STEP);
    expect(ran.every((call) => call.decision === 'auto' && !call.is_error && call.output!.includes('(UTC)'))).toBe(true);
    const refused = calls.slice(MAX_TOOL_CALLS_PER_STEP);
    expect(refused.every((call) => call.is_error && call.decision === null && call.class === 'read')).toBe(true);
    expect(refused[0]!.output).toBe(
      `Error: Not run: this reply asked for ${count} tool calls and at most ${MAX_TOOL_CALLS_PER_STEP} are run per reply. Ask again for the ones you still need, fewer at a time.`,
    );
    // The model got an answer for every call, in order.
    const answers = (provider.requests.at(-1)!.body.messages as { role: string; tool_call_id?: string; content: string }[]).filter(
      (message) => message.role === 'tool',
    );
    expect(answers.map((message) => message.tool_call_id)).toEqual(calls.map((call) => call.call_id));
    expect(answers.at(-1)!.content).toContain('Not run');
    // Every call has its created and completed event.
    const events = parseEvents(await (await fetch(`${base}/agents/runs/${run.id}/events`, { headers: { accept: 'text/event-stream' } })).text());
    expect(events.filter((event) => event.event === 'tool_call.completed')).toHaveLength(count);
    expect(events.filter((event) => event.event === 'tool_call.created')).toHaveLength(count);
  });
});

describe('replaying a run of 10,000 events', () => {
  /** A finished run with `count` stored events (message deltas, then run.completed), written as the store writes them. */
  function storedRun(count: number): string {
    const store = app.services.agents.store;
    const run = agentRun(`run_replay${Date.now()}`, {
      agent_id: 'burst',
      conversation_id: 'conv_replay',
      model: 'script/scripted',
      status: 'completed',
      input: [{ role: 'user', content: 'replay' }],
      output_text: 'x'.repeat(count - 2),
      completed_at: 2,
    });
    store.insert(run);
    store.appendEvent({ type: 'run.created', sequence: 1, run_id: run.id, run });
    for (let sequence = 2; sequence < count; sequence++) store.appendEvent({ type: 'message.delta', sequence, run_id: run.id, step: 0, delta: 'x' });
    store.appendEvent({ type: 'run.completed', sequence: count, run_id: run.id, run });
    return run.id;
  }

  it('hands every event on in order, and other work runs before the replay ends', { timeout: 120_000 }, async () => {
    const runId = storedRun(10_000);
    const received: AgentRunEvent[] = [];
    let timerFired = false;
    let firedBeforeEnd: boolean | undefined;
    setTimeout(() => (timerFired = true), 0);
    const followed = app.services.agents.follow(runId, 0, (event) => {
      received.push(event);
      if (event.type === 'run.completed') firedBeforeEnd = timerFired;
    });
    const more = await followed.replayed;
    expect(firedBeforeEnd).toBe(true);
    expect(received.map((event) => event.sequence)).toEqual(Array.from({ length: 10_000 }, (_value, index) => index + 1));
    // A run that is not live here: nothing more will come.
    expect(more).toBe(false);
  });

  it('a follower that joins a live run mid-stream gets every event once, in order, to the end', { timeout: 120_000 }, async () => {
    const words = Array.from({ length: 5000 }, (_value, index) => `w${index}`).join(' ');
    provider.setScript([{ content: words }]);
    const started = await app.services.agents.start('burst', { input: 'talk a lot' });
    // Join once some events are stored, so the replay and the live events overlap.
    await expect.poll(() => app.services.agents.store.lastSequence(started.run.id), { interval: 5 }).toBeGreaterThanOrEqual(500);
    const received: number[] = [];
    const followed = app.services.agents.follow(started.run.id, 0, (event) => received.push(event.sequence));
    await followed.replayed;
    const run = await started.finished;
    expect(run.status).toBe('completed');
    const last = app.services.agents.store.lastSequence(run.id);
    expect(received).toEqual(Array.from({ length: last }, (_value, index) => index + 1));
  });

  it('over SSE the stream holds every event once, in order, and ends after the last', { timeout: 120_000 }, async () => {
    const runId = storedRun(10_000);
    const text = await (await fetch(`${base}/agents/runs/${runId}/events`, { headers: { accept: 'text/event-stream' } })).text();
    const events = parseEvents(text);
    expect(events.map((event) => event.data.sequence)).toEqual(Array.from({ length: 10_000 }, (_value, index) => index + 1));
    expect(events.at(-1)!.event).toBe('run.completed');
  });
});
