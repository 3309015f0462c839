import { describe, expect, it } from 'vitest';
import { GeneratedTokens } from '../../../companion/src/inference/generated-tokens.js';
import type { GenerationResult } from '../../../companion/src/inference/types.js';

const result = (completionTokens: number, finishReason: GenerationResult['finishReason'] = 'stop') => ({ completionTokens, finishReason }) as GenerationResult;

describe("a model's generated tokens", () => {
  it('counts streamed pieces at once and puts the exact count in their place at the end', () => {
    const tokens = new GeneratedTokens();
    const seen: string[] = [];
    const counted = tokens.count((delta) => seen.push(delta));
    counted.onText!('Hel');
    counted.onText!('lo');
    expect(tokens.total).toBe(2);
    expect(counted.generated).toBe(2);
    counted.finish(result(3));
    counted.end();
    expect(tokens.total).toBe(3);
    expect(seen).toEqual(['Hel', 'lo']);
  });

  it('takes the pieces of a failed request back out, and keeps the other requests', () => {
    const tokens = new GeneratedTokens();
    const done = tokens.count(() => {});
    done.onText!('a');
    done.finish(result(1));
    done.end();
    const failed = tokens.count(() => {});
    failed.onText!('b');
    failed.onText!('c');
    failed.end();
    expect(tokens.total).toBe(1);
  });

  it('counts a request that does not stream only when it ends, with no pieces to forward', () => {
    const tokens = new GeneratedTokens();
    const counted = tokens.count(undefined);
    expect(counted.onText).toBeUndefined();
    counted.finish(result(7));
    counted.end();
    expect(tokens.total).toBe(7);
  });

  it('learns the typical length from requests that were not cancelled', () => {
    const tokens = new GeneratedTokens();
    tokens.count(undefined).finish(result(100));
    tokens.count(undefined).finish(result(1, 'cancelled'));
    expect(tokens.typical).toBe(100);
    tokens.count(undefined).finish(result(50));
    expect(tokens.typical).toBe(90);
  });
});
