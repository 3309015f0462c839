import type { LlamaContext, LlamaContextSequence, Token } from 'node-llama-cpp';
import { joinLine, type Waiter as LineWaiter } from '../waiting-line.js';

interface Waiter extends LineWaiter<LlamaContextSequence> {
  prompt: readonly Token[];
}

interface Held {
  /** Creation order, which is node-llama-cpp's sequence id while no sequence is disposed. */
  id: number;
  /** The prompt of the request running on it. */
  prompt?: readonly Token[];
  /**
   * How many of its tokens the last request's prompt accounts for (measured at release): the
   * conversation it holds, without the reply. Less than that prompt when it was cancelled before
   * its prompt was evaluated.
   */
  conversation: number;
  /** When it was last released (a counter), for least-recently-used. */
  releasedAt: number;
}

/** What the choice knows about one free sequence. */
export interface Candidate {
  id: number;
  /** Tokens the sequence holds now. */
  stored: number;
  /** Tokens of the request's prompt that match its start. */
  shared: number;
  /** Its tokens that the last request's prompt accounts for. */
  conversation: number;
  releasedAt: number;
}

/**
 * Tokens at the end of an earlier prompt that may come out differently once the reply follows it
 * (the generation prompt and the reply's first characters can merge into other tokens). A request
 * that matches a sequence up to this close to the end of its conversation continues it.
 */
const BOUNDARY_SLACK = 4;
/** A partial match counts only above this share of the prompt (llama-server's default slot similarity). */
const SIMILAR = 0.1;

/**
 * The rank of a free sequence for a prompt; higher is better. A sequence whose last prompt the
 * request repeats whole holds this conversation: taking it evaluates only the new tokens. An empty
 * sequence costs nothing to take. A sequence that shares only a start (a common system prompt)
 * holds another conversation: taking it throws that conversation's tail away, and with a shared
 * system prompt two conversations would then take turns evicting each other on one sequence, so
 * it is used only when no empty one is left.
 */
function rank(candidate: Candidate, promptLength: number): number {
  if (candidate.stored === 0) return 2;
  if (candidate.conversation > 0 && candidate.shared > 0 && candidate.shared >= candidate.conversation - BOUNDARY_SLACK) return 3;
  if (candidate.shared > promptLength * SIMILAR) return 1;
  return 0;
}

/**
 * Chooses among free sequences for a prompt of `promptLength` tokens: the best rank (see `rank`),
 * then the longest shared prefix (within ranks that reuse one), then the least recently used, and
 * only then the lowest id. Returns the index into `candidates`, or -1 when a new, empty sequence
 * (`canCreate`) is better than all of them.
 *
 * The lowest id is only the last tie-breaker. With a KV cache per sequence, llama.cpp puts only
 * sequences with consecutive ids into one decode pass, so busy sequences packed at the low ids keep
 * a step one graph computation; a gap costs a second computation per step while both run, a few
 * milliseconds. Handing a conversation's sequence to another request costs that conversation a full
 * re-read of its history on its next turn, seconds with a long system prompt. The cache wins.
 */
export function chooseSequence(candidates: readonly Candidate[], promptLength: number, canCreate: boolean): number {
  let best = -1;
  let bestRank = canCreate ? 2 : -1;
  for (let index = 0; index < candidates.length; index++) {
    const candidate = candidates[index]!;
    const candidateRank = rank(candidate, promptLength);
    if (candidateRank < bestRank) continue;
    if (candidateRank > bestRank || best < 0 || better(candidate, candidates[best]!, candidateRank)) {
      best = index;
      bestRank = candidateRank;
    }
  }
  // An existing empty sequence goes before a new one: fewer sequences in use, lower ids.
  return best;
}

function better(a: Candidate, b: Candidate, sharedRank: number): boolean {
  if (sharedRank % 2 === 1 && a.shared !== b.shared) return a.shared > b.shared;
  if (a.releasedAt !== b.releasedAt) return a.releasedAt < b.releasedAt;
  return a.id < b.id;
}

/**
 * Hands out the sequences of one context. Sequences are kept, not disposed, so a follow-up turn
 * reuses the evaluated prefix of an earlier one: a request takes the free sequence that holds its
 * conversation (see `chooseSequence`). Requests beyond the sequence count wait in a bounded FIFO
 * queue; released sequences go to the waiters at the head of the queue, matched to them as well
 * as the free sequences allow. When the queue is full the caller gets a 429 whose Retry-After is
 * `waitSeconds()`, the expected time until a sequence frees.
 */
export class SequencePool {
  private readonly free: LlamaContextSequence[] = [];
  private readonly held = new Map<LlamaContextSequence, Held>();
  private created = 0;
  private releases = 0;
  private readonly waiting: Waiter[] = [];
  private dispatchScheduled = false;

  constructor(
    private readonly context: LlamaContext,
    readonly capacity: number,
    private readonly queueLimit: number,
    private readonly waitSeconds: () => number,
  ) {}

  get busy(): number {
    return this.created - this.free.length;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** A sequence for a request whose prompt is `prompt` (the tokens it will evaluate). */
  acquire(signal: AbortSignal, prompt: readonly Token[] = []): Promise<LlamaContextSequence> {
    signal.throwIfAborted();
    // Waiters go first: a sequence released a moment ago is theirs once the dispatch runs.
    if (this.waiting.length === 0) {
      const sequence = this.take(prompt);
      if (sequence) return Promise.resolve(sequence);
    }
    return joinLine({ waiting: this.waiting, capacity: this.capacity, queueLimit: this.queueLimit, waitSeconds: this.waitSeconds }, signal, (handlers) => ({
      prompt,
      ...handlers,
    }));
  }

  release(sequence: LlamaContextSequence): void {
    const held = this.held.get(sequence);
    if (held) {
      // A request that named no prompt leaves the measure of the conversation before it.
      if (held.prompt?.length) held.conversation = sequence.compareContextTokens(held.prompt as Token[]).firstDifferentIndex;
      held.prompt = undefined;
      held.releasedAt = ++this.releases;
    }
    this.free.push(sequence);
    if (this.waiting.length > 0) this.scheduleDispatch();
  }

  /** Fails every waiting request, e.g. when the model is being unloaded. */
  rejectWaiting(error: unknown): void {
    for (const waiter of this.waiting.splice(0)) waiter.reject(error);
  }

  /** The sequence's id in the context (its place in creation order). */
  idOf(sequence: LlamaContextSequence): number | undefined {
    return this.held.get(sequence)?.id;
  }

  /** The best free sequence for `prompt`, a new one when that is better, or none when all are busy. */
  private take(prompt: readonly Token[]): LlamaContextSequence | undefined {
    const index = chooseSequence(
      this.free.map((sequence) => this.candidate(sequence, prompt)),
      prompt.length,
      this.created < this.capacity,
    );
    if (index >= 0) return this.handOut(this.free.splice(index, 1)[0]!, prompt);
    if (this.created >= this.capacity) return undefined;
    const sequence = this.context.getSequence();
    this.held.set(sequence, { id: this.created++, conversation: 0, releasedAt: 0 });
    return this.handOut(sequence, prompt);
  }

  private handOut(sequence: LlamaContextSequence, prompt: readonly Token[]): LlamaContextSequence {
    this.held.get(sequence)!.prompt = prompt;
    return sequence;
  }

  private candidate(sequence: LlamaContextSequence, prompt: readonly Token[]): Candidate {
    const held = this.held.get(sequence)!;
    const stored = sequence.contextTokens.length;
    const shared = stored === 0 || prompt.length === 0 ? 0 : sequence.compareContextTokens(prompt as Token[]).firstDifferentIndex;
    return { id: held.id, stored, shared, conversation: held.conversation, releasedAt: held.releasedAt };
  }

  /**
   * Releases that come together (several generations ending in one decode step) are handed out
   * together, after the current turn of the event loop: the waiters at the head of the queue, as
   * many as there are free sequences, each get the best match among them. Only the matching looks
   * past arrival order, never who is served: a later waiter never overtakes an earlier one.
   */
  private scheduleDispatch(): void {
    if (this.dispatchScheduled) return;
    this.dispatchScheduled = true;
    setImmediate(() => {
      this.dispatchScheduled = false;
      const served = this.waiting.splice(0, Math.min(this.waiting.length, this.free.length));
      const pending = new Set(served);
      while (pending.size > 0) {
        // The waiter whose best sequence ranks highest chooses first.
        let pick: { waiter: Waiter; index: number; score: number } | undefined;
        for (const waiter of pending) {
          const candidates = this.free.map((sequence) => this.candidate(sequence, waiter.prompt));
          const index = chooseSequence(candidates, waiter.prompt.length, false);
          const chosen = candidates[index]!;
          const score = rank(chosen, waiter.prompt.length) * 1e9 + chosen.shared;
          if (!pick || score > pick.score) pick = { waiter, index, score };
        }
        pending.delete(pick!.waiter);
        pick!.waiter.resolve(this.handOut(this.free.splice(pick!.index, 1)[0]!, pick!.waiter.prompt));
      }
    });
  }
}
