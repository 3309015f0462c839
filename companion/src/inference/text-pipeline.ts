/**
 * The one way a local generation's text reaches the client. Every streamed piece passes these
 * stages, in this order:
 *   1. visible: the engine's generator hands on only what the client may see: on llama-server,
 *      `server/output-filter.ts` takes out hidden spans (a model's thoughts) and holds back the text
 *      of a tool call; in process, node-llama-cpp's `onTextChunk` carries the response's text only;
 *   2. counted: each piece counts into the loaded model's generated tokens (`generated-tokens.ts`),
 *      and the request's exact count replaces its pieces when it ends;
 *   3. timed: the first piece reports the time since the engine was asked (loading and waiting
 *      included) to the observer, `GET /metrics`' first-token figure;
 *   4. the request's own `onText`.
 * A model's thought takes the same stages beside the text, into the request's `onReasoning`: stage 1
 * routes it there (llama-server: the filter's thought spans; in process: `onResponseChunk`'s thought
 * segment), it counts as generated tokens, and its first piece may be the first-token time.
 * The stages are one `GenerationText`, typed by the stage it has reached: the Engine opens it at
 * `'timed'` and keeps the request's `onText` to itself (a loaded model gets a `ModelRequest`,
 * which has none); a loaded model can reach the `'counted'` stage only through `counted()`, and
 * only a `'counted'` text gives the request its generator streams into (`request()`).
 */
import type { CountedRequest, GeneratedTokens } from './generated-tokens.js';
import type { GenerationRequest, GenerationResult } from './types.js';

/** What the metrics learn from each local generation. */
export interface GenerationObserver {
  /** Seconds from asking the engine to the first streamed text (loading and queueing included). */
  firstToken(model: string, seconds: number): void;
  /** The exact prompt and completion token counts of a finished (or cancelled) generation. */
  generated(model: string, promptTokens: number, completionTokens: number): void;
}

/** A request as a loaded model gets it: without the client's `onText` and `onReasoning`, which only the pipeline reaches. */
export type ModelRequest = Omit<GenerationRequest, 'onText' | 'onReasoning'>;

type Sink = (delta: string) => void;

export type TextStage = 'timed' | 'counted';

/** One generation's text between its generator and the client, at the stage `Stage` (see above). */
export class GenerationText<Stage extends TextStage> {
  private constructor(
    readonly stage: Stage,
    private readonly sink: Sink | undefined,
    private readonly count: CountedRequest | undefined,
    private readonly thought: Sink | undefined = undefined,
  ) {}

  /**
   * Stage 3 over the client's `onText` (and `onReasoning`): opened when the engine is asked, so the
   * first-token time includes loading and waiting; the first piece of either counts.
   */
  static open(client: Sink | undefined, firstPiece: ((seconds: number) => void) | undefined, thought?: Sink): GenerationText<'timed'> {
    if (!firstPiece) return new GenerationText('timed', client, undefined, thought);
    const started = performance.now();
    let first = true;
    const timed = (sink: Sink | undefined): Sink | undefined =>
      sink &&
      ((delta) => {
        if (first && delta) {
          first = false;
          firstPiece((performance.now() - started) / 1000);
        }
        sink(delta);
      });
    return new GenerationText('timed', timed(client), undefined, timed(thought));
  }

  /** Stage 2 in front of stage 3: each piece counted into the model's tokens. End it with `finish` and `end`. */
  counted(this: GenerationText<'timed'>, tokens: GeneratedTokens): GenerationText<'counted'> {
    const count = tokens.count(this.sink, this.thought);
    return new GenerationText('counted', count.onText, count, count.onReasoning);
  }

  /** The request an engine's generator runs: its `onText` and `onReasoning` (stage 1's output) go through every stage. */
  request(this: GenerationText<'counted'>, request: ModelRequest): GenerationRequest {
    return { ...request, onText: this.sink, onReasoning: this.thought };
  }

  /** Pieces streamed so far (the wait estimate's progress). */
  get generated(): number {
    return this.count?.generated ?? 0;
  }

  /** The generation ended with this result: its exact token count replaces its pieces. */
  finish(this: GenerationText<'counted'>, result: GenerationResult): void {
    this.count?.finish(result);
  }

  /** Always called last: the pieces of a generation that failed are taken back out of the count. */
  end(this: GenerationText<'counted'>): void {
    this.count?.end();
  }
}
