/**
 * Keeping a conversation inside the model's context, the way the user chose for it (LM Studio's
 * three policies): stop at the limit, truncate the middle (keep the system prompt and the first
 * exchange, leave out the oldest turns after it) or a rolling window (keep the newest turns).
 * The app applies the policy when it builds a request; the companion never cuts one.
 */

export type OverflowPolicy = 'stop' | 'truncate-middle' | 'rolling-window';

export const OVERFLOW_POLICIES: readonly { value: OverflowPolicy; label: string; hint: string }[] = [
  { value: 'truncate-middle', label: 'Truncate the middle', hint: 'Keeps the system prompt and the first exchange, leaves out the oldest turns after it.' },
  { value: 'rolling-window', label: 'Rolling window', hint: 'Keeps the newest turns that fit, leaves out the oldest.' },
  { value: 'stop', label: 'Stop at the limit', hint: 'Sends nothing that does not fit; you choose what to do.' },
];

/** New conversations: a conversation can always continue. */
export const DEFAULT_OVERFLOW: OverflowPolicy = 'truncate-middle';

/** Tokens a chat template adds around each message (role markers, separators), rounded up. */
export const MESSAGE_OVERHEAD = 8;
/** Tokens of the prompt that starts the reply. */
export const PROMPT_OVERHEAD = 8;
/**
 * Tokens per character before anything was measured for this model: 0.5 (two characters a
 * token) is more than English costs with real tokenizers (about four), so guesses err long.
 */
export const DEFAULT_TOKENS_PER_CHAR = 0.5;
/**
 * Tokens an image is guessed to cost in a prompt: Gemma 3's projector takes 256, others from about
 * 64 to a few thousand. A guess that is short is caught by the companion's own count (a context
 * error, and the conversation is fitted again).
 */
export const IMAGE_TOKENS = 256;
/**
 * Tokens a recording (at most 30 s, one window of an audio projector) is guessed to cost: Qwen2.5-Omni
 * takes about 750 for 30 s, Voxtral about 375, Ultravox fewer. A guess that is short is caught the
 * way an image's is.
 */
export const SOUND_TOKENS = 750;
/** A prompt shorter than this says little about the tokenizer: it does not recalibrate. */
export const MIN_CALIBRATION_CHARS = 200;

export interface ContextMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  /** Tokens the companion counted for this text, when it did (a reply's completion tokens). */
  countedTokens?: number | null;
  /** Images sent with it (a question's), each guessed at IMAGE_TOKENS. */
  images?: number;
  /** Recordings sent with it (a question's), each guessed at SOUND_TOKENS. */
  sounds?: number;
}

/** Tokens one message costs in a prompt: the larger of its estimate and what the companion counted. */
export function messageTokens(message: Pick<ContextMessage, 'content' | 'countedTokens' | 'images' | 'sounds'>, tokensPerChar: number): number {
  const estimate = Math.ceil(message.content.length * tokensPerChar);
  const media = (message.images ?? 0) * IMAGE_TOKENS + (message.sounds ?? 0) * SOUND_TOKENS;
  return Math.max(estimate, message.countedTokens ?? 0) + media + MESSAGE_OVERHEAD;
}

/** Tokens of a system prompt in a request (0 when there is none). */
export function systemTokens(system: string, tokensPerChar: number): number {
  return system ? messageTokens({ content: system }, tokensPerChar) : 0;
}

/**
 * Tokens per character measured from a request the companion counted: its prompt tokens over the
 * characters of the messages sent, template overhead included (so estimates stay on the long side).
 */
export function calibrate(promptTokens: number, promptChars: number): number | null {
  if (promptChars < MIN_CALIBRATION_CHARS || promptTokens <= 0) return null;
  return promptTokens / promptChars;
}

/** The part of the context the prompt may use: what is left after the room kept for the reply. */
export function promptBudget(contextWindow: number, maxTokens: number | null): number {
  const reply = maxTokens ?? Math.min(1024, Math.floor(contextWindow / 4));
  return Math.max(0, contextWindow - Math.min(reply, Math.floor(contextWindow / 2)));
}

export interface FitRequest {
  /** The conversation so far, oldest first, ending with the message being answered. */
  messages: ContextMessage[];
  /** Tokens of the system prompt (and anything else sent before the messages). */
  fixedTokens: number;
  /** Tokens the prompt may use. */
  budget: number;
  policy: OverflowPolicy;
  tokensPerChar: number;
}

export interface FitResult {
  /** The request fits (with `kept`); false: it does not, and `reason` says why. */
  fits: boolean;
  /** The messages to send, in order. */
  kept: ContextMessage[];
  /** Ids of the messages left out, in order. */
  omitted: string[];
  /** Estimated tokens of the prompt as sent (or, when it does not fit, as it would be). */
  tokens: number;
  /** `limit`: the whole conversation is over the limit and the policy is to stop; `message`: the last message alone does not fit. */
  reason: 'limit' | 'message' | null;
}

/**
 * Chooses what of a conversation to send. Whole messages are kept or left out; a kept run of
 * earlier turns starts with a user message (some chat templates insist on it), and the message
 * being answered is always sent.
 */
export function fitConversation(request: FitRequest): FitResult {
  const { messages, fixedTokens, budget, policy, tokensPerChar } = request;
  const cost = messages.map((message) => messageTokens(message, tokensPerChar));
  const total = fixedTokens + PROMPT_OVERHEAD + cost.reduce((sum, tokens) => sum + tokens, 0);
  if (total <= budget || messages.length === 0) return { fits: true, kept: messages, omitted: [], tokens: total, reason: null };
  if (policy === 'stop') return { fits: false, kept: messages, omitted: [], tokens: total, reason: 'limit' };

  const last = messages.length - 1;
  let used = fixedTokens + PROMPT_OVERHEAD + cost[last]!;
  if (used > budget) return { fits: false, kept: [messages[last]!], omitted: [], tokens: used, reason: 'message' };

  const keep = new Set<number>([last]);
  // Truncate the middle: the first exchange stays when it fits beside the last message.
  let head = 0;
  if (policy === 'truncate-middle') {
    const exchange = messages[1]?.role === 'assistant' && last > 1 ? [0, 1] : last > 0 ? [0] : [];
    const exchangeCost = exchange.reduce((sum, index) => sum + cost[index]!, 0);
    if (exchange.length > 0 && used + exchangeCost <= budget) {
      for (const index of exchange) keep.add(index);
      used += exchangeCost;
      head = exchange.length;
    }
  }
  // Then the newest turns, going back until the next one would not fit.
  let from = last;
  for (let index = last - 1; index >= head; index--) {
    if (used + cost[index]! > budget) break;
    used += cost[index]!;
    from = index;
  }
  // A kept run starts with a user message: an assistant message at its start goes too.
  while (from < last && messages[from]!.role !== 'user') used -= cost[from++]!;
  for (let index = from; index < last; index++) keep.add(index);

  const kept = messages.filter((_message, index) => keep.has(index));
  const omitted = messages.filter((_message, index) => !keep.has(index)).map((message) => message.id);
  return { fits: true, kept, omitted, tokens: used, reason: null };
}
