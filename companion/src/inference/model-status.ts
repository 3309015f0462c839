/** A loaded chat model's status, the part both engines read alike. */
import type { GeneratedTokens } from './generated-tokens.js';
import type { LoadedModel, LoadedStatus } from './loaded-model.js';

/** The model and its engine, its threads and context, its sequences and the requests at them, and the tokens it generated. */
export function commonStatus(
  model: Pick<LoadedModel, 'info' | 'engine' | 'engineReason'>,
  facts: { threads: number; contextSize: number; queue: { capacity: number; busy: number; queued: number }; tokens: GeneratedTokens },
): Omit<LoadedStatus, 'threadChoices' | 'steps'> {
  const { threads, contextSize, queue, tokens } = facts;
  return {
    id: model.info.id,
    engine: model.engine,
    engineReason: model.engineReason,
    threads,
    contextSize,
    sequences: queue.capacity,
    busy: queue.busy,
    queued: queue.queued,
    generatedTokens: tokens.total,
  };
}
