import { describe, expect, it } from 'vitest';
import { runFigures } from '../../web/src/lib/stores/agent-runs';
import { plural } from '../../web/src/lib/words';

describe('plural', () => {
  it('writes one as one and every other count as many, with thousands separated', () => {
    expect(plural(1, 'message')).toBe('1 message');
    expect(plural(0, 'message')).toBe('0 messages');
    expect(plural(2, 'message')).toBe('2 messages');
    expect(plural(1234, 'token')).toBe('1,234 tokens');
    expect(plural(1, 'entry', 'entries')).toBe('1 entry');
    expect(plural(3, 'entry', 'entries')).toBe('3 entries');
  });

  it('is what a run of one token says', () => {
    const usage = { prompt_tokens: 0, completion_tokens: 1, total_tokens: 1 };
    expect(runFigures({ usage, createdAt: 0, completedAt: null })).toBe('1 token (0 prompt, 1 written)');
    expect(runFigures({ usage: { prompt_tokens: 1000, completion_tokens: 234, total_tokens: 1234 }, createdAt: 0, completedAt: 3 })).toBe(
      '1,234 tokens (1,000 prompt, 234 written) · 3 s',
    );
  });
});
