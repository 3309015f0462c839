/**
 * The llama-server engine on the tiny model, through the one Engine interface: conversations that
 * never re-read their history (counted by llama-server's own prompt counters, not the clock), the
 * host-RAM prompt cache, grammars and stop sequences, cancel, and a crash of the process. Needs
 * the llama-server build (the `server-engine` project's global setup makes it).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../companion/src/inference/engine.js';
import type { ServerModel } from '../../../companion/src/inference/server/model.js';
import type { GenerationRequest, HistoryItem, ModelFile } from '../../../companion/src/inference/types.js';
import { HearthError } from '../../../companion/src/errors.js';
import { generationRequest, tinyModelFile } from '../../helpers/models.js';
import { conversationTurn, engineMaker, serverEngineOptions } from '../../helpers/engine.js';

let model: ModelFile;
const makeEngine = engineMaker();
const engine = (parallel: number, healthCheckMs?: number) => makeEngine(serverEngineOptions({ parallel, healthCheckMs }));

beforeAll(async () => {
  model = await tinyModelFile();
});

const ask = (history: HistoryItem[], extra: Partial<GenerationRequest> = {}): GenerationRequest =>
  generationRequest('tiny', { history, maxTokens: 8, sampling: { seed: 5, temperature: 0.8 }, ...extra });

/** One turn: the history plus a new user message; returns the history with the answer and what the prompt cost. */
const turn = (subject: Engine, history: HistoryItem[], text: string) => conversationTurn(subject, model, history, text, ask);

const system: HistoryItem = { role: 'system', text: 'You are a careful assistant. '.repeat(30) };

describe('the llama-server engine', () => {
  it('runs the model in its own process and says why', async () => {
    const subject = engine(2);
    await subject.run(model, ask([{ role: 'user', text: 'Hello' }]));
    const [status] = subject.status();
    expect(status).toMatchObject({ id: 'tiny', engine: 'server', sequences: 2, contextSize: 1024 });
    expect(status!.engineReason).toMatch(/llama-server/);
    expect(status!.process!.pid).toBeGreaterThan(0);
  });

  it('two conversations taking turns evaluate only their new tokens', async () => {
    const subject = engine(2);
    let a = await turn(subject, [system], 'First question from A');
    let b = await turn(subject, [{ role: 'system', text: 'Another assistant entirely. '.repeat(30) }], 'First question from B');
    // The first turns read their whole prompts.
    expect(a.evaluated).toBe(a.promptTokens);
    for (let round = 0; round < 2; round++) {
      const previousA = a.promptTokens;
      a = await turn(subject, a.history, `A asks again, round ${round}`);
      // Everything A sent before (and the answer it got) comes from the cache; only the new turn is read.
      expect(a.reused).toBeGreaterThanOrEqual(previousA);
      expect(a.evaluated).toBeLessThan(a.promptTokens - previousA + 12);
      const previousB = b.promptTokens;
      b = await turn(subject, b.history, `B asks again, round ${round}`);
      expect(b.reused).toBeGreaterThanOrEqual(previousB);
      expect(b.evaluated).toBeLessThan(b.promptTokens - previousB + 12);
    }
  });

  it('restores a conversation evicted by others from the RAM cache', async () => {
    // One slot: B and C each take it from A; A's prompt survives in llama-server's host-RAM cache.
    const subject = engine(1);
    const a = await turn(subject, [system], 'A starts');
    await turn(subject, [{ role: 'system', text: 'B is unrelated. '.repeat(40) }], 'B starts');
    await turn(subject, [{ role: 'system', text: 'C is unrelated too. '.repeat(40) }], 'C starts');
    const again = await turn(subject, a.history, 'A continues');
    expect(again.reused).toBeGreaterThanOrEqual(a.promptTokens);
    expect(again.evaluated).toBeLessThan(again.promptTokens - a.promptTokens + 12);
  });

  it('forces a tool call with a grammar, follows a JSON schema, and stops at a stop sequence', async () => {
    const subject = engine(2);
    const tools = [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { enum: ['Paris', 'Rome'] } }, required: ['city'] } }];
    const forced = await subject.run(model, ask([{ role: 'user', text: 'Weather?' }], { tools, toolMode: { type: 'required' }, maxTokens: 200 }));
    expect(forced.finishReason).toBe('tool_calls');
    expect(forced.toolCalls[0]!.name).toBe('get_weather');
    expect(['Paris', 'Rome']).toContain((JSON.parse(forced.toolCalls[0]!.arguments) as { city: string }).city);

    const schema = { type: 'object', properties: { name: { type: 'string', maxLength: 8 }, warm: { type: 'boolean' } }, required: ['name', 'warm'] };
    const json = await subject.run(model, ask([{ role: 'user', text: 'JSON' }], { output: { type: 'json', schema }, maxTokens: 200 }));
    expect(json.finishReason).toBe('stop');
    const value = JSON.parse(json.text) as { name: string; warm: boolean };
    expect(typeof value.warm).toBe('boolean');
    expect(value.name.length).toBeLessThanOrEqual(8);

    // The tiny model spells with spaces between words: a space stops it at once, with the space left out.
    const stopped = await subject.run(model, ask([{ role: 'user', text: 'Go on' }], { stop: [' '], maxTokens: 100 }));
    expect(stopped.finishReason).toBe('stop');
    expect(stopped.text).not.toContain(' ');
    expect(stopped.completionTokens).toBeLessThan(100);
  });

  it('frees the slot when a stream is cancelled', async () => {
    const subject = engine(1);
    const controller = new AbortController();
    let pieces = 0;
    const result = await subject.run(
      model,
      ask([{ role: 'user', text: 'Go on forever' }], {
        maxTokens: 900,
        signal: controller.signal,
        onText: () => {
          if (++pieces === 5) controller.abort();
        },
      }),
    );
    expect(result.finishReason).toBe('cancelled');
    expect(result.completionTokens).toBeLessThan(900);
    expect(subject.status()[0]!.busy).toBe(0);
    // llama-server itself let go of the slot: its gauge of busy slots drops to zero.
    const server = subject.loadedModel('tiny') as ServerModel;
    await expect.poll(async () => (await server.metrics())['llamacpp:requests_processing'], { timeout: 30_000, interval: 100 }).toBe(0);
    const next = await subject.run(model, ask([{ role: 'user', text: 'Still there?' }]));
    expect(next.completionTokens).toBe(8);
  });

  it('fails a request clearly when the process is killed mid-stream, then restarts it', async () => {
    const subject = engine(1);
    await subject.run(model, ask([{ role: 'user', text: 'warm up' }]));
    const server = subject.loadedModel('tiny') as ServerModel;
    const firstPid = server.serverProcess.pid;
    let pieces = 0;
    const failed = await subject
      .run(
        model,
        ask([{ role: 'user', text: 'A long answer please' }], {
          maxTokens: 900,
          onText: () => {
            if (++pieces === 3) server.serverProcess.kill();
          },
        }),
      )
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(HearthError);
    expect((failed as HearthError).code).toBe('engine_crashed');
    expect((failed as HearthError).message).toMatch(/engine process stopped during this request/);
    const after = await subject.run(model, ask([{ role: 'user', text: 'And now?' }]));
    expect(after.completionTokens).toBe(8);
    const status = subject.status()[0]!;
    expect(status.process!.restarts).toBe(1);
    expect(status.process!.pid).not.toBe(firstPid);
  });

  it('ends a process that stops answering its health check, and restarts it', async () => {
    const subject = engine(1, 300);
    await subject.run(model, ask([{ role: 'user', text: 'warm up' }]));
    const stuck = subject.status()[0]!.process!.pid;
    process.kill(stuck, 'SIGSTOP');
    await expect.poll(() => subject.status()[0]?.process?.pid, { timeout: 30_000, interval: 100 }).not.toBe(stuck);
    expect(subject.status()[0]!.process!.restarts).toBe(1);
    expect((await subject.run(model, ask([{ role: 'user', text: 'Awake?' }]))).completionTokens).toBe(8);
  });
});
