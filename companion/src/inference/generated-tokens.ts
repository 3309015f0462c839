import type { GenerationResult } from './types.js';

/** One request's share of a model's count: `onText` counts each streamed piece and forwards it. */
export interface CountedRequest {
  /** Pieces streamed so far. */
  generated: number;
  onText?: (delta: string) => void;
  /** The same for the pieces of the model's thought (they are generated tokens too). */
  onReasoning?: (delta: string) => void;
  /** The request ended with this result: its exact token count replaces its pieces. */
  finish(result: GenerationResult): void;
  /** Always called last: the pieces of a request that failed are taken back out. */
  end(): void;
}

/**
 * A loaded model's tokens generated since it was loaded, whichever engine runs it: each streamed
 * piece counts at once (for the live tokens/s figure) and a request's exact count replaces its
 * pieces when it ends. Also the typical completion length lately, for the wait estimate.
 */
export class GeneratedTokens {
  total = 0;
  /** Typical completion length of recent requests that were not cancelled. */
  typical?: number;

  count(forward: ((delta: string) => void) | undefined, forwardThought?: (delta: string) => void): CountedRequest {
    let settled = false;
    const counting = (sink: ((delta: string) => void) | undefined) =>
      sink &&
      ((delta: string) => {
        counted.generated++;
        this.total++;
        sink(delta);
      });
    const counted: CountedRequest = {
      generated: 0,
      onText: counting(forward),
      onReasoning: counting(forwardThought),
      finish: (result) => {
        this.total += result.completionTokens - counted.generated;
        settled = true;
        if (result.finishReason !== 'cancelled') this.typical = blend(this.typical, result.completionTokens);
      },
      end: () => {
        if (!settled) this.total -= counted.generated;
      },
    };
    return counted;
  }
}

/** A moving average that weighs the newest figure by a fifth. */
export function blend(previous: number | undefined, next: number): number {
  return previous === undefined ? next : previous * 0.8 + next * 0.2;
}
