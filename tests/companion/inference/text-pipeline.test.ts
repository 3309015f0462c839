import { describe, expect, it } from 'vitest';
import { GeneratedTokens } from '../../../companion/src/inference/generated-tokens.js';
import { GenerationText, type ModelRequest } from '../../../companion/src/inference/text-pipeline.js';
import type { GenerationResult } from '../../../companion/src/inference/types.js';
import { generationRequest } from '../../helpers/models.js';

const request: ModelRequest = generationRequest('tiny', { toolMode: { type: 'auto' } });

const result = (completionTokens: number): GenerationResult => ({ text: '', toolCalls: [], finishReason: 'stop', promptTokens: 3, completionTokens });

describe("a generation's text pipeline", () => {
  it('counts each piece, reports the first non-empty one once, then hands it to the client', () => {
    const seen: string[] = [];
    const firsts: number[] = [];
    const tokens = new GeneratedTokens();
    const counted = GenerationText.open(
      (delta) => seen.push(`${delta}:${tokens.total}`),
      (seconds) => firsts.push(seconds),
    ).counted(tokens);
    const generator = counted.request(request);
    generator.onText!('');
    generator.onText!('Hel');
    generator.onText!('lo');
    // The count is ahead of the client at every piece; only the first piece with text is timed.
    expect(seen).toEqual([':1', 'Hel:2', 'lo:3']);
    expect(firsts).toHaveLength(1);
    expect(firsts[0]).toBeGreaterThanOrEqual(0);
    expect(counted.generated).toBe(3);
    counted.finish(result(2));
    counted.end();
    expect(tokens.total).toBe(2);
  });

  it('takes a failed generation back out of the count, and streams nothing for a request without onText', () => {
    const tokens = new GeneratedTokens();
    const failed = GenerationText.open(() => {}, undefined).counted(tokens);
    failed.request(request).onText!('a');
    failed.end();
    expect(tokens.total).toBe(0);
    const silent = GenerationText.open(undefined, () => {}).counted(tokens);
    expect(silent.request(request).onText).toBeUndefined();
  });

  it('keeps its stages in order for the type checker', () => {
    const timed = GenerationText.open(() => {}, undefined);
    const counted = timed.counted(new GeneratedTokens());
    const misuse = () => {
      // @ts-expect-error a model cannot give its generator the timed stage: its text would go uncounted
      timed.request(request);
      // @ts-expect-error nor count twice
      counted.counted(new GeneratedTokens());
      // @ts-expect-error a loaded model's request has no onText of the client's to call
      request.onText?.('x');
    };
    expect(misuse).toBeTypeOf('function');
    expect([timed.stage, counted.stage]).toEqual(['timed', 'counted']);
  });
});
