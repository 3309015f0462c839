/**
 * The tokenizer with memory a prompt is tokenised with: the same tokens as tokenising the whole
 * rendered prompt, a later turn tokenising only its new runs (the earlier history comes from the
 * cache), an edited earlier message tokenised again, and the cache held within its bounds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveChatWrapper, type ChatWrapper, type Llama, type LlamaModel, type Token, type Tokenizer } from 'node-llama-cpp';
import { planGeneration, type ModelRuntime } from '../../../companion/src/inference/generation-plan.js';
import { GrammarCache } from '../../../companion/src/inference/grammar-cache.js';
import { TokenRunCache } from '../../../companion/src/inference/token-runs.js';
import type { HistoryItem } from '../../../companion/src/inference/types.js';
import { loadLlama } from '../../../companion/src/inference/llama.js';
import { generationRequest, tinyModelPath, tinyThinkingModelPath } from '../../helpers/models.js';

let llama: Llama;
let model: LlamaModel;
let thinker: LlamaModel;

beforeAll(async () => {
  llama = await loadLlama('cpu');
  model = await llama.loadModel({ modelPath: await tinyModelPath(), vocabOnly: true });
  thinker = await llama.loadModel({ modelPath: await tinyThinkingModelPath(), vocabOnly: true });
});

afterAll(async () => {
  await model?.dispose();
  await thinker?.dispose();
});

/** node-llama-cpp's tokenizer, recording the texts it is asked to tokenise. */
function watched(source: Tokenizer): { tokenizer: Tokenizer; seen: string[] } {
  const seen: string[] = [];
  const tokenize = (text: string, special?: boolean | 'builtin', options?: 'trimLeadingSpace'): Token[] => {
    seen.push(text);
    return source(text as never, special as never, options);
  };
  return {
    tokenizer: Object.assign(tokenize, { detokenize: source.detokenize, isSpecialToken: source.isSpecialToken, isEogToken: source.isEogToken }) as Tokenizer,
    seen,
  };
}

const system = `You are a careful assistant. ${'Remember every word of this long system prompt. '.repeat(20)}`;
const conversation = (turns: number): HistoryItem[] => {
  const history: HistoryItem[] = [{ role: 'system', text: system }];
  for (let turn = 1; turn <= turns; turn++) {
    history.push({ role: 'user', text: `Question ${turn}: what comes next?` });
    if (turn < turns) history.push({ role: 'assistant', text: `Answer ${turn}: the next thing, then more.`, toolCalls: [] });
  }
  return history;
};

const wrappers = new Map<LlamaModel, ChatWrapper>();
function runtime(of: LlamaModel, tokenRuns?: TokenRunCache): ModelRuntime {
  let wrapper = wrappers.get(of);
  if (!wrapper) wrappers.set(of, (wrapper = resolveChatWrapper(of)));
  return { llama, model: of, wrapper, contextSize: 4096, grammars: new GrammarCache(llama), tokenRuns };
}

describe('the tokenizer with memory', () => {
  it('gives a prompt the tokens of a whole tokenisation, turn after turn, on plain and thinking formats', async () => {
    for (const of of [model, thinker]) {
      const cache = new TokenRunCache(of.tokenizer);
      for (const turns of [1, 3]) {
        const request = generationRequest('tiny', { history: conversation(turns) });
        const plain = await planGeneration(runtime(of), request);
        const cached = await planGeneration(runtime(of, cache), request);
        expect(cached.promptTokens).toEqual(plain.promptTokens);
        expect(cached.promptTokens).toEqual(plain.promptText.tokenize(of.tokenizer));
      }
      expect(cache.counts.hits).toBeGreaterThan(0);
    }
  });

  it('tokenises only what a later turn adds: the system prompt and earlier messages come from the cache', async () => {
    const { tokenizer, seen } = watched(model.tokenizer);
    const cache = new TokenRunCache(tokenizer);
    await planGeneration(runtime(model, cache), generationRequest('tiny', { history: conversation(2) }));
    expect(seen).toContain(system);
    seen.length = 0;
    const next = await planGeneration(runtime(model, cache), generationRequest('tiny', { history: conversation(3) }));
    // Only the last reply and the new question reached the tokenizer.
    expect(seen.some((text) => text.includes('Question 3'))).toBe(true);
    expect(seen.some((text) => text.includes('Answer 2'))).toBe(true);
    expect(seen.some((text) => text.includes(system) || text.includes('Question 1') || text.includes('Question 2:'))).toBe(false);
    expect(next.promptTokens).toEqual(next.promptText.tokenize(model.tokenizer));
  });

  it('tokenises an edited earlier message again, and gives its new tokens', async () => {
    const { tokenizer, seen } = watched(model.tokenizer);
    const cache = new TokenRunCache(tokenizer);
    await planGeneration(runtime(model, cache), generationRequest('tiny', { history: conversation(3) }));
    seen.length = 0;
    const edited = conversation(3).map((item) =>
      item.role === 'user' && item.text.startsWith('Question 1') ? { ...item, text: 'Question 1: what came before?' } : item,
    );
    const plan = await planGeneration(runtime(model, cache), generationRequest('tiny', { history: edited }));
    expect(seen).toContain('Question 1: what came before?');
    expect(seen).not.toContain(system);
    expect(plan.promptTokens).toEqual(plan.promptText.tokenize(model.tokenizer));
  });

  it('keeps within its bounds, least recently used out first, and keeps no run longer than its character bound', () => {
    const { tokenizer, seen } = watched(model.tokenizer);
    const cache = new TokenRunCache(tokenizer, { entries: 3, chars: 40 });
    for (const text of ['one two', 'three four', 'five six', 'seven eight']) cache.tokenizer(text);
    expect(cache.size.entries).toBe(3);
    expect(cache.size.chars).toBeLessThanOrEqual(40);
    seen.length = 0;
    // 'one two' went first; 'seven eight' is kept.
    cache.tokenizer('seven eight');
    cache.tokenizer('one two');
    expect(seen).toEqual(['one two']);

    const long = 'a long run of text past the bound';
    cache.tokenizer(`${long} ${long}`);
    seen.length = 0;
    expect(cache.tokenizer(`${long} ${long}`)).toEqual(model.tokenizer(`${long} ${long}`));
    expect(seen).toHaveLength(1);
    expect(cache.size.chars).toBeLessThanOrEqual(40);
  });

  it('tells special-token text from plain text and a trimmed leading space from none', () => {
    const cache = new TokenRunCache(model.tokenizer);
    for (const [special, options] of [
      [false, undefined],
      [true, undefined],
      [false, 'trimLeadingSpace'],
      [true, 'trimLeadingSpace'],
    ] as const) {
      for (const text of [' <|im_start|>user hello', '<|im_end|>\n']) {
        expect(cache.tokenizer(text, special, options)).toEqual(model.tokenizer(text, special, options));
        expect(cache.tokenizer(text, special, options)).toEqual(model.tokenizer(text, special, options));
      }
    }
    expect(cache.tokenizer('BOS', 'builtin')).toEqual(model.tokenizer('BOS', 'builtin'));
  });
});
