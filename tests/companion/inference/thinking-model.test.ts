/**
 * The tiny thinking model (`writeTinyModel`'s `thinking`, `npm run model:tiny -- --thinking`):
 * node-llama-cpp resolves its template to a wrapper with a thought segment the model's turn opens,
 * `<think>` and `</think>` are single control tokens, and thinking switched off uses the
 * template's own `enable_thinking`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveChatWrapper, type LlamaModel } from 'node-llama-cpp';
import { thoughtMarks, wrapperFor } from '../../../companion/src/inference/thinking.js';
import { loadLlama } from '../../../companion/src/inference/llama.js';
import { tinyModelPath, tinyThinkingModelPath } from '../../helpers/models.js';

let thinking: LlamaModel;
let plain: LlamaModel;

beforeAll(async () => {
  const llama = await loadLlama('cpu');
  thinking = await llama.loadModel({ modelPath: await tinyThinkingModelPath(), vocabOnly: true });
  plain = await llama.loadModel({ modelPath: await tinyModelPath(), vocabOnly: true });
});

afterAll(async () => {
  await thinking?.dispose();
  await plain?.dispose();
});

describe('the tiny thinking model', () => {
  it('resolves to a chat format whose thought the model’s turn opens', () => {
    const marks = thoughtMarks(resolveChatWrapper(thinking));
    expect(marks).toEqual({ open: '<think>\n', close: '\n</think>\n\n', atStart: true });
    expect(thinking.tokenizer('<think>', true)).toHaveLength(1);
    expect(thinking.tokenizer('</think>', true)).toHaveLength(1);
  });

  it('switches thinking off with its template’s enable_thinking: the thought is no longer opened', () => {
    const wrapper = resolveChatWrapper(thinking);
    const off = wrapperFor(thinking, wrapper, { enabled: false });
    expect(off).not.toBe(wrapper);
    expect(thoughtMarks(off)?.atStart).toBe(false);
    expect(wrapperFor(thinking, wrapper, { enabled: false })).toBe(off);
    expect(wrapperFor(thinking, wrapper, { enabled: true, budgetTokens: 4 })).toBe(wrapper);
  });

  it('leaves the plain tiny model without a thought segment', () => {
    const wrapper = resolveChatWrapper(plain);
    expect(thoughtMarks(wrapper)).toBeUndefined();
    expect(wrapperFor(plain, wrapper, { enabled: false })).toBe(wrapper);
  });
});
