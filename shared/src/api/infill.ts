/** Wire types of llama.cpp's POST /infill (fill-in-the-middle for editors: llama.vscode, Tabby). */

export interface InfillRequest {
  /** A local model's id; left out: the one local model with fill-in-the-middle tokens, when there is exactly one. */
  model?: string;
  /** The text before the cursor. */
  input_prefix?: string;
  /** The text after the cursor. */
  input_suffix?: string;
  /** Other files as context, before the prefix. */
  input_extra?: { filename?: string; text: string }[];
  /** Text appended to the prefix (llama.vscode sends the current line's start here). */
  prompt?: string;
  /** Tokens to generate; default and -1: until the model stops or the context is full. */
  n_predict?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  seed?: number;
  stop?: string[];
  stream?: boolean;
  /** Accepted and ignored (Hearth always reuses the cached prefix). */
  cache_prompt?: boolean;
}

/** The answer (and with `stream`, each `data:` line, the last with `stop: true` and the counts). */
export interface InfillAnswer {
  content: string;
  stop: boolean;
  model?: string;
  tokens_predicted?: number;
  tokens_evaluated?: number;
  /** Why it stopped: `eos` (the model ended), `word` (a stop text), `limit` (n_predict). */
  stop_type?: 'eos' | 'word' | 'limit' | 'none';
  truncated?: boolean;
}
