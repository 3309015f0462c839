/**
 * A model's thought on the engine, through the one Engine interface: streamed to onReasoning and
 * returned as `reasoning` (never in the text), a token budget that closes it so the answer starts,
 * and thinking switched off. Runs in process here and on llama-server in the server-engine project
 * (HEARTH_ENGINE). The tiny thinking model's template opens `<think>` and its random weights never
 * close it, so the budget is what ends each thought.
 */
import { statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../../companion/src/inference/engine.js';
import type { GenerationObserver } from '../../../companion/src/inference/text-pipeline.js';
import type { ModelFile } from '../../../companion/src/inference/types.js';
import { engineOptions, serverEngineOptions } from '../../helpers/engine.js';
import { generationRequest, tinyModelPath, tinyThinkingModelPath } from '../../helpers/models.js';

const onServer = process.env.HEARTH_ENGINE === 'server';
let engine: Engine;
let thinking: ModelFile;
let plain: ModelFile;
const firstTokens: string[] = [];

beforeAll(async () => {
  const file = (id: string, path: string): ModelFile => ({ id, path, sizeBytes: statSync(path).size, capabilities: ['chat'] });
  thinking = file('thinker', await tinyThinkingModelPath());
  plain = file('tiny', await tinyModelPath());
  const observer: GenerationObserver = { firstToken: (model) => firstTokens.push(model), generated: () => {} };
  engine = new Engine(onServer ? serverEngineOptions({ observer }) : engineOptions({ observer }));
});

afterAll(() => engine?.close());

const generatedTokens = () => engine.status().find((entry) => entry.id === 'thinker')?.generatedTokens ?? 0;

/** Runs a request, collecting what streamed to onText and onReasoning. */
async function run(model: ModelFile, extra: Parameters<typeof generationRequest>[1]) {
  const streamed = { text: '', thought: '' };
  const result = await engine.run(
    model,
    generationRequest(model.id, {
      sampling: { seed: 3, temperature: 0.8 },
      onText: (delta) => (streamed.text += delta),
      onReasoning: (delta) => (streamed.thought += delta),
      ...extra,
    }),
  );
  return { result, streamed };
}

describe(`a model's thought (${onServer ? 'llama-server' : 'in process'})`, () => {
  it('streams the thought to onReasoning and returns it apart from the text; a budget ends it and the answer starts', async () => {
    const { result, streamed } = await run(thinking, { maxTokens: 14, reasoning: { enabled: true, budgetTokens: 5 } });
    expect(result.reasoning!.length).toBeGreaterThan(0);
    expect(streamed.thought).toBe(result.reasoning);
    expect(result.reasoningTokens).toBe(5);
    // The answer started after the thought: its tokens are the rest of the completion.
    expect(result.text.length).toBeGreaterThan(0);
    expect(streamed.text).toBe(result.text);
    expect(result.text).not.toContain(result.reasoning!);
    expect(result.completionTokens).toBe(14);
    expect(result.finishReason).toBe('length');
  });

  it('counts the thought in the tokens the model generated, so the budget holds whatever is sampled', async () => {
    // Seeds whose thought once ran past the budget: in process a first token with a leading space
    // (" letter") was counted again as the letters left once the space was dropped (seed 42: 6);
    // on llama-server a token whose text the server held back ("<", a stop text's start) went
    // uncounted (seed 60: 3).
    for (const seed of [40, 41, 42, 60, 72, 83, 84, 86, 87]) {
      const { result } = await run(thinking, { maxTokens: 16, sampling: { seed, temperature: 0.8 }, reasoning: { enabled: true, budgetTokens: 4 } });
      expect({ seed, reasoningTokens: result.reasoningTokens }).toEqual({ seed, reasoningTokens: 4 });
      expect(result.completionTokens).toBe(16);
    }
  });

  it('thinks until max tokens when no budget ends the thought (no answer then); the thought is generated text to the metrics', async () => {
    const before = { firsts: firstTokens.length, generated: generatedTokens() };
    const { result, streamed } = await run(thinking, { maxTokens: 6 });
    expect(result.text).toBe('');
    expect(streamed.text).toBe('');
    expect(streamed.thought).toBe(result.reasoning);
    expect(result.reasoningTokens).toBe(6);
    // Only thought streamed: its first piece is the first-token time, and its tokens count as generated.
    expect(firstTokens.length).toBe(before.firsts + 1);
    expect(generatedTokens() - before.generated).toBe(6);
  });

  it('gives no thought with thinking off: every token is answer', async () => {
    const { result, streamed } = await run(thinking, { maxTokens: 6, reasoning: { enabled: false } });
    expect(streamed.thought).toBe('');
    expect(result.reasoning ?? '').toBe('');
    expect(result.reasoningTokens ?? 0).toBe(0);
    expect(result.text.length).toBeGreaterThan(0);
    expect(result.completionTokens).toBe(6);
  });

  it('takes an earlier turn’s thought in history and drops it from the prompt, as the template does', async () => {
    const history = (reasoning?: string) => [
      { role: 'user' as const, text: 'Hello' },
      { role: 'assistant' as const, text: 'the world', toolCalls: [], reasoning },
      { role: 'user' as const, text: 'and then' },
    ];
    const without = await run(thinking, { history: history(), maxTokens: 2, reasoning: { enabled: false } });
    const withThought = await run(thinking, { history: history('a long thought '.repeat(20)), maxTokens: 2, reasoning: { enabled: false } });
    expect(withThought.result.promptTokens).toBe(without.result.promptTokens);
  });

  it('with JSON output: in process the thought comes first under its budget; on llama-server the grammar holds from the first token, so there is none', async () => {
    const { result, streamed } = await run(thinking, { maxTokens: 12, output: { type: 'json' }, reasoning: { enabled: true, budgetTokens: 3 } });
    if (onServer) {
      expect(result.reasoning).toBeUndefined();
      expect(result.text.startsWith('{')).toBe(true);
    } else {
      expect(result.reasoningTokens).toBe(3);
      expect(streamed.thought).toBe(result.reasoning);
    }
  });

  it('leaves a model without a thought segment as it was: no reasoning fields', async () => {
    const { result, streamed } = await run(plain, { maxTokens: 4, reasoning: { enabled: true, budgetTokens: 2 } });
    expect(streamed.thought).toBe('');
    expect(result.reasoning).toBeUndefined();
    expect(result.text.length).toBeGreaterThan(0);
  });
});
