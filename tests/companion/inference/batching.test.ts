/**
 * Continuous batching on the tiny model: what each decode step held, observed through the engine's
 * step reports. These assert the order of events and which sequences were active, never speed.
 */
import { statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatchStep } from '../../../companion/src/inference/in-process/batch-steps.js';
import { Engine } from '../../../companion/src/inference/engine.js';
import type { GenerationRequest, GenerationResult, HistoryItem, ModelFile } from '../../../companion/src/inference/types.js';
import { HearthError } from '../../../companion/src/errors.js';
import { generationRequest, tinyModelPath } from '../../helpers/models.js';
import { engineOptions } from '../../helpers/engine.js';

const PARALLEL = 4;
let engine: Engine;
let model: ModelFile;
const steps: BatchStep[] = [];

beforeAll(async () => {
  const path = await tinyModelPath();
  model = { id: 'tiny', path, sizeBytes: statSync(path).size, capabilities: ['chat'] };
  engine = new Engine(engineOptions({ parallel: PARALLEL }));
  await engine.load(model);
  engine.observeSteps(model.id, (step) => steps.push(step));
  // Give every sequence a conversation first, so later requests reuse sequences whose old tokens
  // must be erased before their prompt: the case that used to wait for the running batch to drain.
  const warmUps: Started[] = [];
  for (let index = 0; index < PARALLEL; index++) warmUps.push(await generation(`warm-up ${index}`, 8));
  await Promise.all(warmUps.map((entry) => entry.result));
});

afterAll(async () => {
  await engine.close();
});

interface Started {
  controller: AbortController;
  result: Promise<GenerationResult>;
  /** The context sequence id it runs on. */
  sequence: number;
}

/** Starts a generation and resolves once it holds a sequence (a few microseconds when one is free). */
async function generation(text: string | HistoryItem[], maxTokens: number): Promise<Started> {
  const controller = new AbortController();
  const before = new Set(engine.runningSequences(model.id));
  const request = generationRequest(model.id, {
    history: typeof text === 'string' ? [{ role: 'user', text }] : text,
    maxTokens,
    sampling: { temperature: 0.8, seed: 7 },
    signal: controller.signal,
  });
  const result = engine.run(model, request);
  for (;;) {
    const sequence = engine.runningSequences(model.id).find((id) => !before.has(id));
    if (sequence !== undefined) return { controller, result, sequence };
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Resolves once `count` steps have advanced `sequence`. */
function stepsOf(sequence: number, count: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const stop = engine.observeSteps(model.id, (step) => {
      if (step.sequenceIds.includes(sequence) && ++seen >= count) {
        stop();
        resolve();
      }
    });
  });
}

const holding = (sequence: number) => (step: BatchStep) => step.sequenceIds.includes(sequence);

describe('continuous batching', () => {
  it('takes a request that arrives mid-generation into the running batch, alongside the first', async () => {
    const first = await generation('Tell me a long story.', 300);
    const firstId = first.sequence;
    await stepsOf(firstId, 20);
    const arrival = steps.length;
    const second = await generation('Another story, please.', 40);
    const secondId = second.sequence;
    const [one, two] = await Promise.all([first.result, second.result]);

    const after = steps.slice(arrival);
    const joined = after.findIndex(holding(secondId));
    expect(joined).toBeGreaterThanOrEqual(0);
    // The step that decoded the newcomer's prompt also advanced the running request...
    expect(after[joined]!.sequenceIds).toEqual([firstId, secondId].sort((a, b) => a - b));
    // ...and every step until the newcomer finished held both: neither waited while the other ran.
    const secondSteps = after.filter(holding(secondId));
    for (const step of secondSteps) expect(step.sequenceIds).toContain(firstId);
    expect(two.finishReason).toBe('length');
    expect(two.completionTokens).toBe(40);
    expect(one.finishReason).toBe('length');
    expect(one.completionTokens).toBe(300);
    // One step per generated token: the newcomer's prompt step yields its first token.
    expect(secondSteps.length).toBe(40);
  });

  it('drops a cancelled request from the batch and keeps the others going to the end', async () => {
    const started = [await generation('Story one.', 200), await generation('Story two.', 200), await generation('Story three.', 200)];
    const [a, b, c] = started.map((entry) => entry.sequence);
    await stepsOf(b!, 10);
    started[1]!.controller.abort();
    const cancelled = await started[1]!.result;
    const cancelledAt = steps.length;
    const [first, third] = await Promise.all([started[0]!.result, started[2]!.result]);

    expect(cancelled.finishReason).toBe('cancelled');
    expect(cancelled.completionTokens).toBeLessThan(200);
    const later = steps.slice(cancelledAt);
    expect(later.some(holding(b!))).toBe(false);
    expect(later.filter(holding(a!)).length).toBeGreaterThan(0);
    // The survivors share their steps after the cancel as before it.
    const together = later.filter((step) => holding(a!)(step) && holding(c!)(step));
    expect(together.length).toBeGreaterThan(0);
    expect([first.finishReason, third.finishReason]).toEqual(['length', 'length']);
    expect([first.completionTokens, third.completionTokens]).toEqual([200, 200]);
  });

  it('never lets requests with a sequence wait while others generate', async () => {
    const leader = await generation('The first of four.', 400);
    const leaderId = leader.sequence;
    await stepsOf(leaderId, 20);
    const arrival = steps.length;
    const followers = [await generation('Second.', 60), await generation('Third.', 60), await generation('Fourth.', 60)];
    const ids = followers.map((entry) => entry.sequence);
    const results = await Promise.all([leader.result, ...followers.map((entry) => entry.result)]);

    const after = steps.slice(arrival);
    const joinedAt = Math.max(...ids.map((id) => after.findIndex(holding(id))));
    const leaderStepsBeforeAllJoined = after.slice(0, joinedAt).filter(holding(leaderId)).length;
    // Their prompts were decoded at the next step or so after they arrived, not after the leader's 380 remaining tokens.
    expect(leaderStepsBeforeAllJoined).toBeLessThanOrEqual(2);
    // From then until the first of them finished, every step advanced all four together.
    const firstDone = Math.min(...ids.map((id) => after.findLastIndex(holding(id))));
    const all = [leaderId, ...ids].sort((a, b) => a - b);
    for (const step of after.slice(joinedAt, firstDone + 1)) expect(step.sequenceIds).toEqual(all);
    expect(results.map((result) => result.completionTokens)).toEqual([400, 60, 60, 60]);
  });

  it("gives a conversation's next turn the sequence that holds it, not merely the lowest free one", async () => {
    const long = await generation('A long story, please.', 200);
    const opening: HistoryItem[] = [{ role: 'user', text: 'Remember the lighthouse by the sea.' }];
    const first = await generation(opening, 12);
    expect(first.sequence).not.toBe(long.sequence);
    const reply = await first.result;
    await long.result;
    const next = await generation([...opening, { role: 'assistant', text: reply.text, toolCalls: [] }, { role: 'user', text: 'And then?' }], 12);
    await next.result;
    expect(next.sequence).toBe(first.sequence);
  });

  it('queues beyond its sequences in arrival order, and refuses past the queue with a Retry-After', async () => {
    const small = new Engine(engineOptions({ contextSize: 512, queueLimit: 1 }));
    const request = (text: string, maxTokens: number, signal = new AbortController().signal): GenerationRequest =>
      generationRequest(model.id, { text, maxTokens, sampling: { temperature: 0.8, seed: 3 }, signal });
    try {
      await small.load(model);
      const order: string[] = [];
      let running = 0;
      small.observeSteps(model.id, () => running++);
      const first = small.run(model, request('First.', 200)).then((result) => (order.push('first'), result));
      while (running < 10) await new Promise((resolve) => setImmediate(resolve));
      const second = small.run(model, request('Second.', 20)).then((result) => (order.push('second'), result));
      await new Promise((resolve) => setImmediate(resolve));
      const refused = await small.run(model, request('Third.', 20)).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(HearthError);
      expect((refused as HearthError).code).toBe('rate_limit_exceeded');
      expect(Number.isInteger((refused as HearthError).retryAfter)).toBe(true);
      expect((refused as HearthError).retryAfter).toBeGreaterThanOrEqual(1);
      const [one, two] = await Promise.all([first, second]);
      expect(order).toEqual(['first', 'second']);
      expect([one.completionTokens, two.completionTokens]).toEqual([200, 20]);
    } finally {
      await small.close();
    }
  });
});
