/**
 * The parts of reasoning that need no model: llama-server's output filter sending a thought span to
 * its own sink (split across chunks, opened at the start or by the model), and the OpenAI routes'
 * reasoning effort as a thought budget.
 */
import { describe, expect, it } from 'vitest';
import { OutputFilter, withoutHidden, type HiddenSpan } from '../../../companion/src/inference/server/output-filter.js';
import { reasoningOf } from '../../../companion/src/routes/openai/reasoning.js';

function filtered(chunks: string[], spans: HiddenSpan[]) {
  const out = { text: '', thought: '', thinking: [] as boolean[] };
  const filter = new OutputFilter(
    [],
    spans,
    (text) => (out.text += text),
    (text) => (out.thought += text),
  );
  for (const chunk of chunks) {
    filter.push(chunk);
    out.thinking.push(filter.thinking);
  }
  filter.finish();
  return out;
}

const think: HiddenSpan = { open: '<think>\n', close: '\n</think>\n\n', thought: true };

describe('the output filter with a thought span', () => {
  it('sends a thought the model opens to the thought sink, its marks to neither, split marks included', () => {
    const out = filtered(['Hi <thi', 'nk>\nfirst', ' idea\n</th', 'ink>\n\nthe answer'], [think]);
    expect(out.thought).toBe('first idea');
    expect(out.text).toBe('Hi the answer');
    expect(out.thinking).toEqual([false, true, true, false]);
  });

  it('starts inside a thought opened at the start, and sends what is left of an unclosed one at the end', () => {
    const out = filtered(['still', ' thinking\n</'], [{ ...think, openAtStart: true }]);
    expect(out.thought).toBe('still thinking\n</');
    expect(out.text).toBe('');
    expect(withoutHidden('still thinking', [{ ...think, openAtStart: true }])).toBe('');
  });

  it('drops a span that is not the thought (a comment), as before', () => {
    const out = filtered(['a<c>hidden</c>b'], [{ open: '<c>', close: '</c>' }]);
    expect(out).toMatchObject({ text: 'ab', thought: '' });
  });
});

describe('reasoning effort as a thought budget', () => {
  it('turns thinking off with none or enable_thinking false', () => {
    expect(reasoningOf('none', undefined, 100)).toEqual({ enabled: false });
    expect(reasoningOf(undefined, false, 100)).toEqual({ enabled: false });
    expect(reasoningOf('high', false, 100)).toEqual({ enabled: false });
  });

  it('gives minimal, low and medium a share of the max tokens (fixed budgets without one), high none', () => {
    expect([reasoningOf('minimal', undefined, 160), reasoningOf('low', undefined, 160), reasoningOf('medium', undefined, 160)]).toEqual([
      { enabled: true, budgetTokens: 10 },
      { enabled: true, budgetTokens: 40 },
      { enabled: true, budgetTokens: 80 },
    ]);
    expect(reasoningOf('low', undefined, undefined)).toEqual({ enabled: true, budgetTokens: 1024 });
    expect(reasoningOf('minimal', undefined, 3)).toEqual({ enabled: true, budgetTokens: 1 });
    expect(reasoningOf('high', undefined, 160)).toEqual({ enabled: true });
  });

  it('leaves the model its default when neither is given', () => {
    expect(reasoningOf(undefined, undefined, 100)).toBeUndefined();
    expect(reasoningOf(null, true, 100)).toEqual({ enabled: true });
  });
});
