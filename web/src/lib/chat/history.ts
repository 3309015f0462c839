/** What of a stored conversation goes into the next request, and what its replies say about token counts. */
import { ApiError } from '$lib/api/client';
import type { Conversation, StoredMessage } from '$lib/storage/conversations';
import { AgentRunFailed } from './agent-reply';
import { calibrate, DEFAULT_TOKENS_PER_CHAR, type ContextMessage, type FitResult } from './context';

/** The messages a model is given: a reply that failed before writing anything is left out. */
export function sendable(messages: StoredMessage[]): StoredMessage[] {
  return messages.filter((message) => message.role === 'user' || message.content.trim() !== '');
}

export function contextMessages(messages: StoredMessage[]): ContextMessage[] {
  return messages.map((message) => ({
    id: message.id,
    role: message.role,
    content: message.content,
    ...(message.images?.length ? { images: message.images.length } : {}),
    ...(message.sounds?.length ? { sounds: message.sounds.length } : {}),
    // A finished model reply's completion tokens are its text as the model counts it (an agent's also count its tool calls).
    countedTokens: message.role === 'assistant' && message.status === 'done' && !message.runId ? (message.stats?.completionTokens ?? null) : null,
  }));
}

/** Characters of the messages of a request: what its prompt tokens are measured against. */
export function charsOf(messages: { content: string }[]): number {
  return messages.reduce((sum, message) => sum + message.content.length, 0);
}

/** Tokens per character for a model: what it was last measured at, else a guess that errs long. */
export function rateFor(conversation: Conversation, modelKey: string, learned: Record<string, number>): number {
  if (learned[modelKey]) return learned[modelKey];
  for (let index = conversation.messages.length - 1; index >= 0; index--) {
    const { model, stats } = conversation.messages[index]!;
    if (model !== modelKey || !stats?.promptTokens || !stats.promptChars) continue;
    const measured = calibrate(stats.promptTokens, stats.promptChars);
    if (measured) return measured;
  }
  return DEFAULT_TOKENS_PER_CHAR;
}

/** Something of a reply came back: its text, or a reasoning model's thought. */
export function arrived(reply: StoredMessage): boolean {
  return !!(reply.content.trim() || reply.reasoning?.trim());
}

/** The last turn failed before anything came back: the question and its empty failed reply. */
export function failedTurn(messages: StoredMessage[]): number | null {
  const reply = messages.at(-1);
  const question = messages.at(-2);
  const failed = reply?.status === 'error' || reply?.status === 'interrupted';
  if (reply?.role !== 'assistant' || !failed || arrived(reply) || question?.role !== 'user') return null;
  return messages.length - 2;
}

/** The companion (or the agent's run) refused the prompt as longer than the model's context. */
export function contextExceeded(error: unknown): boolean {
  return (error instanceof ApiError || error instanceof AgentRunFailed) && error.code === 'context_length_exceeded';
}

/** A request that was not sent because it does not fit, in words. */
export class ContextOverflow extends Error {
  constructor(
    readonly fit: Pick<FitResult, 'tokens' | 'reason'>,
    /** The model's context, and the part of it the prompt may use (the rest is kept for the reply). */
    readonly window: number,
    readonly budget: number,
    model: string,
  ) {
    const count = (tokens: number) => tokens.toLocaleString('en');
    const room = `${model}'s context holds ${count(window)} tokens, ${count(budget)} of them for the conversation and the rest for the reply`;
    super(
      fit.reason === 'message'
        ? `This message is too long: about ${count(fit.tokens)} tokens, and ${room}. Shorten it, or split it into parts.`
        : `This conversation no longer fits: it is about ${count(fit.tokens)} tokens, and ${room}. It is set to stop at the limit: let Hearth leave out older messages, or start a new conversation.`,
    );
    this.name = 'ContextOverflow';
  }
}
