/**
 * Which sequence a request gets. The policy on its own (which candidate wins), then conversations
 * taking turns on the tiny model: each later turn lands on the sequence holding its conversation
 * and evaluates only its new tokens, read from node-llama-cpp's token meter, never the clock.
 */
import { resolveChatWrapper, type LlamaContext, type LlamaContextSequence, type LlamaModel } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../../companion/src/inference/in-process/generate.js';
import { GrammarCache } from '../../../companion/src/inference/grammar-cache.js';
import { planGeneration, type ModelRuntime } from '../../../companion/src/inference/generation-plan.js';
import { loadLlama } from '../../../companion/src/inference/llama.js';
import { chooseSequence, SequencePool, type Candidate } from '../../../companion/src/inference/in-process/pool.js';
import type { GenerationRequest, HistoryItem } from '../../../companion/src/inference/types.js';
import { generationRequest, tinyModelPath } from '../../helpers/models.js';

const candidate = (id: number, fields: Partial<Candidate>): Candidate => ({ id, stored: 300, shared: 0, conversation: 280, releasedAt: id + 1, ...fields });

describe('choosing a free sequence', () => {
  it('takes the sequence whose conversation the prompt continues, over an empty one', () => {
    const free = [candidate(0, { shared: 250 }), candidate(1, { shared: 280 }), candidate(2, { stored: 0, conversation: 0 })];
    expect(chooseSequence(free, 320, true)).toBe(1);
  });

  it('counts a prompt that differs only in the last few tokens of that conversation as continuing it', () => {
    // The generation prompt at the end of the last prompt and the reply's first characters can tokenize differently.
    expect(chooseSequence([candidate(0, { shared: 277 }), candidate(1, { stored: 0, conversation: 0 })], 320, false)).toBe(0);
  });

  it('leaves another conversation alone while an empty sequence is left, even when they share a long system prompt', () => {
    // Sequence 0 holds A (system prompt of 250 tokens, then A's first message); B's first turn shares only the system prompt.
    const free = [candidate(0, { shared: 250 })];
    expect(chooseSequence(free, 270, true)).toBe(-1);
    expect(chooseSequence([...free, candidate(1, { stored: 0, conversation: 0 })], 270, false)).toBe(1);
  });

  it('with none empty, reuses the longest shared start, and the least recently used when nothing meaningful is shared', () => {
    const shared = [candidate(0, { shared: 200, releasedAt: 1 }), candidate(1, { shared: 250, releasedAt: 9 }), candidate(2, { shared: 0, releasedAt: 0 })];
    expect(chooseSequence(shared, 300, false)).toBe(1);
    // Three shared template tokens of a 300-token prompt are not a match: least recently used.
    const unrelated = [candidate(0, { shared: 3, releasedAt: 5 }), candidate(1, { shared: 2, releasedAt: 2 }), candidate(2, { shared: 3, releasedAt: 7 })];
    expect(chooseSequence(unrelated, 300, false)).toBe(1);
  });

  it('breaks remaining ties by the lowest id, which keeps busy sequences packed for batching', () => {
    const tied = [candidate(3, { stored: 0, conversation: 0, releasedAt: 0 }), candidate(1, { stored: 0, conversation: 0, releasedAt: 0 })];
    expect(chooseSequence(tied, 300, true)).toBe(1);
  });
});

let model: LlamaModel;
let runtime: ModelRuntime;
// About 600 tokens in the tiny model's vocabulary.
const system = Array.from({ length: 40 }, () => 'you can see the water and the sound of the day').join(', ');

beforeAll(async () => {
  const llama = await loadLlama('cpu');
  model = await llama.loadModel({ modelPath: await tinyModelPath() });
  runtime = { llama, model, wrapper: resolveChatWrapper(model), contextSize: 2048, grammars: new GrammarCache(llama) };
});

afterAll(async () => {
  await model?.dispose();
});

const request = (history: HistoryItem[], signal: AbortSignal): GenerationRequest =>
  generationRequest('tiny', { history, maxTokens: 6, sampling: { temperature: 0, seed: 1 }, signal });

interface Conversation {
  history: HistoryItem[];
  /** Prompt tokens of its previous turn. */
  previousPrompt?: number;
  sequence?: LlamaContextSequence;
}

interface Turn {
  /** Tokens the context evaluated for this turn's prompt. */
  evaluated: number;
  /** Tokens its prompt gained since the conversation's previous turn. */
  grown: number;
  sameSequence: boolean;
}

async function withPool<T>(sequences: number, use: (pool: SequencePool, context: LlamaContext) => Promise<T>): Promise<T> {
  const context = await model.createContext({ contextSize: 2048 * sequences, sequences, threads: 1 });
  try {
    return await use(new SequencePool(context, sequences, 8, () => 1), context);
  } finally {
    await context.dispose();
  }
}

/** One turn of a conversation through the pool: the user's message, the model's reply appended. */
async function takeTurn(pool: SequencePool, conversation: Conversation, text: string): Promise<Turn> {
  conversation.history.push({ role: 'user', text });
  const req = request(conversation.history, new AbortController().signal);
  const plan = await planGeneration(runtime, req);
  const sequence = await pool.acquire(req.signal, plan.promptTokens);
  const before = sequence.tokenMeter.usedInputTokens;
  try {
    const result = await generate(runtime, sequence, req, plan);
    conversation.history.push({ role: 'assistant', text: result.text, toolCalls: [] });
  } finally {
    pool.release(sequence);
  }
  const turn = {
    evaluated: sequence.tokenMeter.usedInputTokens - before,
    grown: plan.promptTokens.length - (conversation.previousPrompt ?? 0),
    sameSequence: conversation.sequence === sequence,
  };
  conversation.previousPrompt = plan.promptTokens.length;
  conversation.sequence = sequence;
  return turn;
}

async function takingTurns(count: number, rounds: number): Promise<Turn[][]> {
  return withPool(4, async (pool) => {
    const conversations: Conversation[] = Array.from({ length: count }, () => ({ history: [{ role: 'system', text: system }] }));
    const turns: Turn[][] = conversations.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (const [index, conversation] of conversations.entries())
        turns[index]!.push(await takeTurn(pool, conversation, `Conversation ${index}, question ${round}: what next?`));
    }
    return turns;
  });
}

/** A later turn re-evaluates nothing it had before, apart from the reply's first tokens, which may tokenize differently in the history. */
function expectOnlyNewTokens(turn: Turn): void {
  expect(turn.sameSequence).toBe(true);
  expect(turn.evaluated).toBeGreaterThan(0);
  expect(turn.evaluated).toBeLessThanOrEqual(turn.grown + 4);
}

describe('conversations taking turns on the tiny model', () => {
  it('the system prompt is long enough that re-reading it would show', async () => {
    const turns = await takingTurns(1, 1);
    expect(turns[0]![0]!.evaluated).toBeGreaterThan(400);
  });

  it('two conversations each stay on the sequence that holds them, and each later turn evaluates only its new tokens', async () => {
    const turns = await takingTurns(2, 3);
    for (const conversation of turns) for (const turn of conversation.slice(1)) expectOnlyNewTokens(turn);
  });

  it('three conversations do too', async () => {
    const turns = await takingTurns(3, 3);
    for (const conversation of turns) for (const turn of conversation.slice(1)) expectOnlyNewTokens(turn);
  });

  it('waiting requests woken together each get the sequence that holds their conversation', async () => {
    await withPool(2, async (pool) => {
      const a: Conversation = { history: [{ role: 'system', text: system }] };
      const b: Conversation = { history: [{ role: 'system', text: system }] };
      await Promise.all([takeTurn(pool, a, 'First question of A.'), takeTurn(pool, b, 'First question of B.')]);
      expect(a.sequence).not.toBe(b.sequence);
      // Both sequences are taken (by requests that end without evaluating anything)...
      const signal = new AbortController().signal;
      const held = [await pool.acquire(signal, []), await pool.acquire(signal, [])];
      // ...while B's next turn queues first and A's second.
      const prompt = async (conversation: Conversation, text: string) =>
        (await planGeneration(runtime, request([...conversation.history, { role: 'user', text }], signal))).promptTokens;
      const [promptB, promptA] = [await prompt(b, 'Second question of B.'), await prompt(a, 'Second question of A.')];
      const forB = pool.acquire(signal, promptB);
      const forA = pool.acquire(signal, promptA);
      expect(pool.queued).toBe(2);
      // A's sequence frees first, then B's, in the same turn of the event loop.
      expect(new Set(held)).toEqual(new Set([a.sequence, b.sequence]));
      pool.release(a.sequence!);
      pool.release(b.sequence!);
      expect([await forB, await forA]).toEqual([b.sequence, a.sequence]);
    });
  });
});
