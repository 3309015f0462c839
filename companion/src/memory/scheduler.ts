import type { Logger } from '../logger.js';
import type { DistillOutcome, Distiller } from './distiller.js';

const key = (agentId: string, conversationId: string) => `${agentId}\u0000${conversationId}`;

/**
 * When distillation runs (docs/memory.md rule 2): after a conversation has been quiet for the
 * debounce interval, at once when an agent's direct session moves to another conversation, or
 * on an explicit flush. Passes run one at a time (the model is shared); a conversation is never
 * distilled by two passes at once.
 */
export class DistillScheduler {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** The conversation each agent is chatting in directly; delegated work never changes it (rule 4). */
  private readonly active = new Map<string, string>();
  private chain: Promise<unknown> = Promise.resolve();
  private readonly stop = new AbortController();
  private running = 0;

  constructor(
    private readonly distiller: Distiller,
    private readonly debounceMs: () => number,
    private readonly log: Logger,
    /** Called after each pass that distilled something (new records to embed). */
    private readonly onPass: () => void = () => undefined,
  ) {}

  /** Whether a pass is running or waiting. */
  get busy(): boolean {
    return this.running > 0;
  }

  /** A turn was buffered: restart the conversation's quiet timer; a direct turn in a new conversation ends the previous session. */
  buffered(agentId: string, conversationId: string, kind: 'direct' | 'delegated'): void {
    if (kind === 'direct') {
      const previous = this.active.get(agentId);
      this.active.set(agentId, conversationId);
      if (previous !== undefined && previous !== conversationId) this.now(agentId, previous);
    }
    this.later(agentId, conversationId);
  }

  /** Starts (or restarts) the quiet timer of a conversation. */
  later(agentId: string, conversationId: string, delayMs = this.debounceMs()): void {
    const id = key(agentId, conversationId);
    clearTimeout(this.timers.get(id));
    const timer = setTimeout(() => {
      this.timers.delete(id);
      this.now(agentId, conversationId);
    }, delayMs);
    timer.unref();
    this.timers.set(id, timer);
  }

  /** Queues a pass now (cancelling the quiet timer); resolves when it has run. */
  now(agentId: string, conversationId: string): Promise<DistillOutcome | undefined> {
    const id = key(agentId, conversationId);
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
    this.running++;
    const pass = this.chain.then(async () => {
      if (this.stop.signal.aborted) return undefined;
      try {
        const outcome = await this.distiller.distill(agentId, conversationId, this.stop.signal);
        if (outcome.signals > 0) this.onPass();
        return outcome;
      } catch (error) {
        this.log.error({ err: error, agent: agentId, conversation: conversationId }, 'memory distillation failed');
        return undefined;
      } finally {
        this.running--;
      }
    });
    this.chain = pass;
    return pass;
  }

  /** Timers waiting for this agent (all conversations, or one). */
  waiting(agentId: string, conversationId?: string): string[] {
    return [...this.timers.keys()]
      .filter((id) => id.startsWith(`${agentId}\u0000`) && (conversationId === undefined || id === key(agentId, conversationId)))
      .map((id) => id.slice(agentId.length + 1));
  }

  /** Forgets an agent entirely (after a purge). */
  forget(agentId: string): void {
    for (const conversation of this.waiting(agentId)) {
      clearTimeout(this.timers.get(key(agentId, conversation)));
      this.timers.delete(key(agentId, conversation));
    }
    this.active.delete(agentId);
  }

  async close(): Promise<void> {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.stop.abort(new Error('memory shutting down'));
    await this.chain.catch(() => undefined);
  }
}
