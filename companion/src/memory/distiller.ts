import { HearthError } from '../errors.js';
import type { Logger } from '../logger.js';
import { EXTRACTION_MAX_TOKENS, EXTRACTION_SCHEMA, EXTRACTION_SYSTEM, extractionPrompt, parseExtraction } from './extraction.js';
import type { ExtractionRunner, MemoryModels } from './models.js';
import type { MemoryRecords } from './records.js';
import type { TranscriptStore, TurnRow } from './transcript.js';

/** Signals that failed this many passes are dropped from the queue (their transcript stays). */
const MAX_ATTEMPTS = 3;
/** A first guess of characters per token when sizing a pass; a refused prompt is split further. */
const CHARS_PER_TOKEN = 3;
const SYSTEM_ALLOWANCE_TOKENS = 600;
const SHORTEST_TURN_CHARS = 200;

export interface DistillOutcome {
  status: 'distilled' | 'nothing_pending' | 'model_unavailable';
  signals: number;
  episodes: number;
  factsAdded: number;
  factsMerged: number;
}

type Pending = TurnRow & { signal_id: number };

/** Runs the extraction pass over a conversation's pending signals, in passes that fit the model. */
export class Distiller {
  constructor(
    private readonly transcript: TranscriptStore,
    private readonly records: MemoryRecords,
    private readonly models: MemoryModels,
    private readonly identity: (agentId: string) => { key: string; value: string }[],
    private readonly log: Logger,
  ) {}

  async distill(agentId: string, conversationId: string, signal: AbortSignal): Promise<DistillOutcome> {
    const outcome: DistillOutcome = { status: 'nothing_pending', signals: 0, episodes: 0, factsAdded: 0, factsMerged: 0 };
    let pending = this.transcript.pending(agentId, conversationId);
    if (pending.length === 0) return outcome;
    const runner = await this.models.extraction();
    if (!runner) return { ...outcome, status: 'model_unavailable' };
    outcome.status = 'distilled';
    let room = Math.max(256, (runner.contextSize - EXTRACTION_MAX_TOKENS - SYSTEM_ALLOWANCE_TOKENS) * CHARS_PER_TOKEN);
    while (pending.length > 0 && !signal.aborted) {
      const batch = firstBatch(pending, room);
      const done = await this.pass(runner, agentId, conversationId, batch, signal);
      if (done === undefined) break;
      // The model needed smaller passes than guessed: start the next one at that size.
      if (done.signals < batch.length) room = Math.max(256, Math.floor(room / 2));
      outcome.signals += done.signals;
      outcome.episodes += done.episodes;
      outcome.factsAdded += done.factsAdded;
      outcome.factsMerged += done.factsMerged;
      pending = this.transcript.pending(agentId, conversationId);
    }
    return outcome;
  }

  /** One batch; split in halves (a single turn shortened) while the model refuses or is cut off. */
  private async pass(
    runner: ExtractionRunner,
    agentId: string,
    conversationId: string,
    batch: Pending[],
    signal: AbortSignal,
    shorten = 1,
  ): Promise<Omit<DistillOutcome, 'status'> | undefined> {
    const turns =
      shorten === 1 ? batch : batch.map((turn) => ({ ...turn, user_text: cut(turn.user_text, shorten), assistant_text: cut(turn.assistant_text, shorten) }));
    let failure: string;
    try {
      const answer = await runner.run({
        system: EXTRACTION_SYSTEM,
        prompt: extractionPrompt(turns, this.identity(agentId)),
        schema: EXTRACTION_SCHEMA,
        maxTokens: EXTRACTION_MAX_TOKENS,
        signal,
      });
      if (signal.aborted) return undefined;
      const extraction = parseExtraction(answer.text);
      if (extraction) {
        const applied = this.records.apply(
          {
            agentId,
            conversationId,
            projectId: batch.find((turn) => turn.project_id !== null)?.project_id ?? null,
            sessionDate: batch[0]!.session_date,
            sessionTime: batch[0]!.session_time,
            signalIds: batch.map((turn) => turn.signal_id),
          },
          extraction,
        );
        return { signals: batch.length, episodes: applied.episodes, factsAdded: applied.factsAdded, factsMerged: applied.factsMerged };
      }
      failure = answer.finishReason === 'length' ? 'the answer was cut off' : 'the answer was not the expected JSON';
      if (answer.finishReason !== 'length') return this.give(batch, failure);
    } catch (error) {
      if (signal.aborted) return undefined;
      if (!(error instanceof HearthError) || error.code !== 'context_length_exceeded') {
        this.log.warn({ err: error, agent: agentId, conversation: conversationId }, 'memory extraction failed');
        return this.give(batch, error instanceof Error ? error.message : String(error));
      }
      failure = 'the prompt did not fit';
    }
    if (batch.length > 1) return this.pass(runner, agentId, conversationId, batch.slice(0, Math.ceil(batch.length / 2)), signal);
    const longest = Math.max(batch[0]!.user_text.length, batch[0]!.assistant_text.length) / shorten;
    if (longest > SHORTEST_TURN_CHARS) return this.pass(runner, agentId, conversationId, batch, signal, shorten * 2);
    return this.give(batch, failure);
  }

  /** Counts a failed attempt; signals past the limit stop being pending so the queue moves on. */
  private give(batch: Pending[], message: string): undefined {
    this.transcript.recordFailure(
      batch.map((turn) => turn.signal_id),
      message,
    );
    const dropped = this.transcript.dropExhausted(
      batch.map((turn) => turn.signal_id),
      MAX_ATTEMPTS,
    );
    if (dropped > 0) this.log.warn({ dropped, reason: message }, 'memory signals dropped after repeated extraction failures');
    return undefined;
  }
}

/** The oldest pending turns whose text fits `room` characters (at least one). */
function firstBatch(pending: Pending[], room: number): Pending[] {
  const batch: Pending[] = [];
  let size = 0;
  for (const turn of pending) {
    size += turn.user_text.length + turn.assistant_text.length + 24;
    if (batch.length > 0 && size > room) break;
    batch.push(turn);
  }
  return batch;
}

function cut(text: string, divisor: number): string {
  const keep = Math.max(SHORTEST_TURN_CHARS, Math.floor(text.length / divisor));
  return text.length > keep ? `${text.slice(0, keep)}…` : text;
}
