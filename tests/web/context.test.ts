import { describe, expect, it } from 'vitest';
import {
  calibrate,
  fitConversation,
  MESSAGE_OVERHEAD,
  messageTokens,
  PROMPT_OVERHEAD,
  promptBudget,
  systemTokens,
  type ContextMessage,
  type OverflowPolicy,
} from '$lib/chat/context';

/** A conversation of `turns` exchanges, each message 100 characters (50 tokens at 0.5 a character), then the new question. */
function conversation(turns: number): ContextMessage[] {
  const messages: ContextMessage[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    messages.push({ id: `u${turn}`, role: 'user', content: `${turn}`.padEnd(100, 'u') });
    messages.push({ id: `a${turn}`, role: 'assistant', content: `${turn}`.padEnd(100, 'a') });
  }
  messages.push({ id: 'new', role: 'user', content: 'and now?' });
  return messages;
}

const RATE = 0.5;
const each = 50 + MESSAGE_OVERHEAD;
const fit = (messages: ContextMessage[], policy: OverflowPolicy, budget: number, fixedTokens = 0) =>
  fitConversation({ messages, policy, budget, fixedTokens, tokensPerChar: RATE });
const ids = (messages: ContextMessage[]) => messages.map((message) => message.id);

describe('token estimates', () => {
  it('count characters at the rate, plus the template overhead, and never less than the companion counted', () => {
    expect(messageTokens({ content: 'x'.repeat(100) }, 0.5)).toBe(50 + MESSAGE_OVERHEAD);
    expect(messageTokens({ content: 'x'.repeat(100), countedTokens: 80 }, 0.5)).toBe(80 + MESSAGE_OVERHEAD);
    expect(messageTokens({ content: 'x'.repeat(100), countedTokens: 10 }, 0.5)).toBe(50 + MESSAGE_OVERHEAD);
    expect(systemTokens('', 0.5)).toBe(0);
  });

  it('calibrate from a counted prompt long enough to say something', () => {
    expect(calibrate(300, 1200)).toBe(0.25);
    expect(calibrate(12, 5)).toBeNull();
  });

  it('keep room for the reply: max tokens when set, else a quarter of the context up to 1024, never more than half', () => {
    expect(promptBudget(2048, null)).toBe(1536);
    expect(promptBudget(32768, null)).toBe(32768 - 1024);
    expect(promptBudget(2048, 100)).toBe(1948);
    expect(promptBudget(2048, 8000)).toBe(1024);
  });
});

describe('fitConversation', () => {
  it('sends everything when it fits, whatever the policy', () => {
    const messages = conversation(3);
    for (const policy of ['stop', 'truncate-middle', 'rolling-window'] as const) {
      const result = fit(messages, policy, 10_000);
      expect(result).toMatchObject({ fits: true, omitted: [], reason: null });
      expect(ids(result.kept)).toEqual(ids(messages));
      expect(result.tokens).toBe(PROMPT_OVERHEAD + 6 * each + messageTokens(messages.at(-1)!, RATE));
    }
  });

  it('stop at the limit: sends nothing that does not fit and says so', () => {
    const result = fit(conversation(10), 'stop', 500);
    expect(result).toMatchObject({ fits: false, reason: 'limit', omitted: [] });
    expect(result.tokens).toBeGreaterThan(500);
  });

  it('truncate the middle: keeps the system prompt, the first exchange and the newest turns, within the budget', () => {
    const messages = conversation(10);
    const system = systemTokens('You are terse.'.repeat(10), RATE);
    const budget = 600;
    const result = fit(messages, 'truncate-middle', budget, system);
    expect(result.fits).toBe(true);
    expect(result.tokens).toBeLessThanOrEqual(budget);
    expect(result.tokens).toBe(system + PROMPT_OVERHEAD + result.kept.reduce((sum, message) => sum + messageTokens(message, RATE), 0));
    expect(ids(result.kept).slice(0, 2)).toEqual(['u1', 'a1']);
    expect(result.kept.at(-1)!.id).toBe('new');
    // The newest turns, with nothing skipped between them, starting with a question.
    const tail = ids(result.kept).slice(2, -1);
    expect(tail[0]!.startsWith('u')).toBe(true);
    expect(tail).toEqual(ids(messages).slice(ids(messages).indexOf(tail[0]!), -1));
    expect(result.omitted).toEqual(ids(messages).filter((id) => !ids(result.kept).includes(id)));
    expect(result.omitted[0]).toBe('u2');
  });

  it('rolling window: keeps the newest turns that fit and drops the oldest, system prompt kept', () => {
    const messages = conversation(10);
    const system = systemTokens('Be kind.', RATE);
    const result = fit(messages, 'rolling-window', 400, system);
    expect(result.fits).toBe(true);
    expect(result.tokens).toBeLessThanOrEqual(400);
    expect(result.kept[0]!.role).toBe('user');
    expect(result.omitted[0]).toBe('u1');
    expect(ids(result.kept)).toEqual(ids(messages).slice(ids(messages).indexOf(result.kept[0]!.id)));
  });

  it('leaves out a first exchange too large to keep, and one huge reply, so the conversation can go on', () => {
    const messages: ContextMessage[] = [
      { id: 'u1', role: 'user', content: 'Tell me a story.' },
      { id: 'a1', role: 'assistant', content: 'word '.repeat(1000), countedTokens: 1990 },
      { id: 'u2', role: 'user', content: 'Shorter, please.' },
    ];
    for (const policy of ['truncate-middle', 'rolling-window'] as const) {
      const result = fit(messages, policy, 1536);
      expect(result.fits).toBe(true);
      expect(ids(result.kept)).toEqual(['u2']);
      expect(result.omitted).toEqual(['u1', 'a1']);
    }
  });

  it('leaves out the first exchange whole when its reply does not fit', () => {
    const messages: ContextMessage[] = [
      { id: 'u1', role: 'user', content: 'Hi' },
      { id: 'a1', role: 'assistant', content: 'x'.repeat(4000) },
      { id: 'u2', role: 'user', content: 'Again' },
    ];
    const result = fit(messages, 'truncate-middle', 200);
    // The exchange is the question and its reply: it stays whole or goes whole.
    expect(ids(result.kept)).toEqual(['u2']);
  });

  it('cannot send a message that alone is over the budget', () => {
    const messages: ContextMessage[] = [{ id: 'u1', role: 'user', content: 'x'.repeat(10_000) }];
    expect(fit(messages, 'rolling-window', 1000)).toMatchObject({ fits: false, reason: 'message' });
  });
});
