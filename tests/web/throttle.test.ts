import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Throttle } from '../../web/src/lib/chat/throttle';

/** A throttle at 100 ms on the fake clock, and what it showed. */
function watched() {
  const shown: string[] = [];
  return {
    shown,
    throttle: new Throttle(
      '',
      100,
      (value) => shown.push(value),
      () => Date.now(),
    ),
  };
}

describe("a streaming reply's text, throttled", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('shows at most one value per interval, always the latest, and the last one at the end', () => {
    const { shown, throttle } = watched();
    let text = '';
    for (let token = 0; token < 50; token++) {
      text += `t${token} `;
      throttle.push(text);
      vi.advanceTimersByTime(10);
    }
    // 50 tokens over 500 ms: the first at once, then one every 100 ms.
    expect(shown.length).toBeGreaterThanOrEqual(5);
    expect(shown.length).toBeLessThanOrEqual(6);
    vi.advanceTimersByTime(100);
    expect(shown.at(-1)).toBe(text);
    for (let i = 1; i < shown.length; i++) expect(shown[i]!.startsWith(shown[i - 1]!)).toBe(true);
  });

  it('shows a finished reply at once and forgets what was pending', () => {
    const { shown, throttle } = watched();
    throttle.push('a');
    throttle.push('ab');
    throttle.flush('abc');
    expect(shown).toEqual(['a', 'abc']);
    vi.advanceTimersByTime(500);
    expect(shown).toEqual(['a', 'abc']);
  });
});
