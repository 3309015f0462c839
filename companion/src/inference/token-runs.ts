/**
 * A tokenizer that remembers what it tokenised, so a conversation's later turn does not tokenise
 * its whole history again. node-llama-cpp's LlamaText.tokenize tokenises a rendered prompt in
 * runs: each stretch of plain text between two special parts on its own, each special part on its
 * own, and joins the tokens. A run's tokens depend on nothing but its text and the two flags it is
 * tokenised with, so the tokens of a run seen before (the system prompt, every earlier message,
 * the template's marks) are taken from here, and only the new runs (the new question, the last
 * reply) reach the tokenizer: the same tokens as a full tokenisation, by construction.
 *
 * Keyed by the rendered text of the run itself, never by a client-supplied name, and bounded
 * (least recently used first out) in entries and in characters; a run longer than the whole
 * character bound is tokenised and not kept.
 */
import type { Token, Tokenizer } from 'node-llama-cpp';

export interface TokenRunLimits {
  /** Runs kept at most. */
  entries: number;
  /** Characters of run text kept at most, all runs together. */
  chars: number;
}

/** 1,024 runs and a million characters (about 250,000 tokens of text; a few MB). */
export const TOKEN_RUN_LIMITS: TokenRunLimits = { entries: 1024, chars: 1_000_000 };

export class TokenRunCache {
  /** Key (flags, then the run's text) → tokens; Map order is use order, oldest first. */
  private readonly runs = new Map<string, readonly Token[]>();
  private chars = 0;
  /** Runs answered from the cache and runs tokenised, since the start. */
  readonly counts = { hits: 0, misses: 0 };
  /** The tokenizer to give LlamaText.tokenize: node-llama-cpp's, with memory. */
  readonly tokenizer: Tokenizer;

  constructor(
    private readonly source: Tokenizer,
    private readonly limits: TokenRunLimits = TOKEN_RUN_LIMITS,
  ) {
    const tokenize = (text: string, specialTokens?: boolean | 'builtin', options?: 'trimLeadingSpace'): Token[] =>
      specialTokens === 'builtin' ? source(text as never, 'builtin') : this.tokenize(text, specialTokens === true, options);
    this.tokenizer = Object.assign(tokenize, {
      detokenize: source.detokenize,
      isSpecialToken: (token: Token) => source.isSpecialToken(token),
      isEogToken: (token: Token) => source.isEogToken(token),
    }) as Tokenizer;
  }

  /** Runs kept now, and their characters. */
  get size(): { entries: number; chars: number } {
    return { entries: this.runs.size, chars: this.chars };
  }

  private tokenize(text: string, specialTokens: boolean, options: 'trimLeadingSpace' | undefined): Token[] {
    if (text === '') return [];
    const key = `${specialTokens ? 's' : 't'}${options === 'trimLeadingSpace' ? 't' : 'k'}${text}`;
    const kept = this.runs.get(key);
    if (kept) {
      this.counts.hits++;
      // Most recently used: to the end of the order.
      this.runs.delete(key);
      this.runs.set(key, kept);
      return kept.slice();
    }
    this.counts.misses++;
    const tokens = this.source(text, specialTokens, options);
    if (text.length <= this.limits.chars) {
      this.runs.set(key, tokens.slice());
      this.chars += text.length;
      this.evict();
    }
    return tokens;
  }

  private evict(): void {
    for (const [key] of this.runs) {
      if (this.runs.size <= this.limits.entries && this.chars <= this.limits.chars) return;
      this.runs.delete(key);
      this.chars -= key.length - 2;
    }
  }
}
