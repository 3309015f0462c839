import { Engine, type EngineOptions } from '../inference/engine.js';
import type { GenerationRequest, GenerationResult, ModelFile } from '../inference/types.js';

/** What the metrics learn from each local generation. */
export interface GenerationObserver {
  /** Seconds from asking the engine to the first streamed text (loading and queueing included). */
  firstToken(model: string, seconds: number): void;
  /** The exact prompt and completion token counts of a finished (or cancelled) generation. */
  generated(model: string, promptTokens: number, completionTokens: number): void;
}

/**
 * The engine, with each generation's first-token time and token counts reported for GET /metrics.
 * Everything else is the engine's own; its other figures (sequences, queue, memory, tokens
 * generated since load) are read through its status, as the Server screen reads them.
 */
export class MeteredEngine extends Engine {
  constructor(
    options: EngineOptions,
    private readonly observer: GenerationObserver,
  ) {
    super(options);
  }

  override async run(info: ModelFile, request: GenerationRequest): Promise<GenerationResult> {
    const started = performance.now();
    const forward = request.onText;
    let first = true;
    const onText = forward
      ? (delta: string) => {
          if (first && delta) {
            first = false;
            this.observer.firstToken(info.id, (performance.now() - started) / 1000);
          }
          forward(delta);
        }
      : undefined;
    const result = await super.run(info, onText ? { ...request, onText } : request);
    this.observer.generated(info.id, result.promptTokens, result.completionTokens);
    return result;
  }
}
