/**
 * Raw prompts (POST /v1/completions, POST /infill): the text without the chat template, rendered
 * into tokens here for both engines as llama-server renders them.
 *   - A plain prompt: tokenised as /completion does, special tokens parsed, BOS first when the
 *     model adds one.
 *   - With a suffix (fill-in-the-middle), as /infill does, with the model's own FIM tokens:
 *     [BOS] [FIM_REP]myproject\n ([FIM_SEP]name\n text)… [FIM_SEP]filename\n
 *     [FIM_PRE]prefix [FIM_SUF]suffix [FIM_MID]. Prefix, suffix and the extra files are text (no
 *     special tokens parsed); extra files go before the prefix (with "--- snippet ---" between them
 *     where the model has no file-separator token). One difference: BOS comes first here, where
 *     llama.cpp puts the extra files in front of it.
 * A prompt (prefix and suffix) that does not fit the context is refused, never cut; the extra
 * files are context only: the most recent of their tokens that leave room for the answer are kept.
 */
import type { LlamaModel, Token } from 'node-llama-cpp';
import { HearthError } from '../errors.js';
import { checkStops } from './generation-plan.js';
import type { GenerationRequest, RawPrompt } from './types.js';

/** What a raw request runs: its tokens and its token budget. */
export interface RawPlan {
  raw: true;
  promptTokens: Token[];
  maxTokens: number;
}

/** The repository and file-separator tokens' names where the file has no id for them (llama.cpp's own list). */
const REPO_NAMES = ['<|fim_repo|>', '<|repo_name|>', '<fim-repo>', '<REPO>', '<reponame>'];
const SEPARATOR_NAMES = ['<|file_sep|>', '<|file_separator|>', '<file_sep>', '<fim-file-sep>', '<FILE_SEP>'];
/** llama.cpp's separator between extra files for models without a file-separator token. */
const SNIPPET = '\n\n--- snippet ---\n\n';

/** Checks and renders a raw request against a context of `contextSize` tokens (Infinity: only counted). */
export function planRaw(model: LlamaModel, contextSize: number, request: GenerationRequest): RawPlan {
  const raw = request.raw!;
  checkStops(request.stop);
  const fim = raw.suffix !== undefined || (raw.extra?.length ?? 0) > 0;
  const fixed = fim ? fimTokens(model, raw, request.model) : [...bos(model), ...model.tokenize(raw.prompt, true)];
  if (fixed.length === 0) throw new HearthError('invalid_request_error', 'prompt is empty: send the text to complete.', { param: 'prompt' });
  const room = contextSize - fixed.length;
  if (room <= 0) {
    throw new HearthError(
      'context_length_exceeded',
      `The prompt${fim ? ' and suffix' : ''} use ${fixed.length} tokens, but ${request.model} has a context of ${contextSize} tokens. Send less text.`,
      { param: 'prompt' },
    );
  }
  let promptTokens = fixed;
  if (fim && raw.extra?.length) {
    // The extra files take what the answer leaves: its budget, or a quarter of the context.
    const reserve = Number.isFinite(contextSize) ? Math.min(room, request.maxTokens ?? Math.floor(contextSize / 4)) : 0;
    const extra = extraTokens(model, raw.extra);
    const take = Math.max(0, Math.min(extra.length, room - reserve));
    const start = model.tokens.shouldPrependBosToken && fixed[0] === model.tokens.bos ? 1 : 0;
    promptTokens = [...fixed.slice(0, start), ...(take > 0 ? extra.slice(-take) : []), ...fixed.slice(start)];
  }
  const left = contextSize - promptTokens.length;
  return { raw: true, promptTokens, maxTokens: Math.min(request.maxTokens ?? left, left) };
}

/** The model's FIM tokens, or the 400 that says it has none. */
function infillTokens(model: LlamaModel, modelId: string): { prefix: Token; suffix: Token; middle: Token } {
  const { prefix, suffix, middle } = model.tokens.infill;
  if (prefix === null || suffix === null || middle === null) {
    throw new HearthError(
      'invalid_request_error',
      `${modelId} has no fill-in-the-middle tokens, so it cannot complete text between a prompt and a suffix. Use a code model that has them (Qwen2.5-Coder, StarCoder2, CodeGemma, DeepSeek-Coder), or leave out suffix.`,
      { param: 'suffix' },
    );
  }
  return { prefix, suffix, middle };
}

function fimTokens(model: LlamaModel, raw: RawPrompt, modelId: string): Token[] {
  const { prefix, suffix, middle } = infillTokens(model, modelId);
  return [...bos(model), prefix, ...model.tokenize(raw.prompt, false), suffix, ...model.tokenize(raw.suffix ?? '', false), middle];
}

function extraTokens(model: LlamaModel, extra: NonNullable<RawPrompt['extra']>): Token[] {
  const repo = specialToken(model, 'fim_rep_token_id', REPO_NAMES);
  const separator = specialToken(model, 'fim_sep_token_id', SEPARATOR_NAMES);
  const tokens: Token[] = [];
  if (repo !== undefined) tokens.push(repo, ...model.tokenize('myproject\n', false));
  for (const file of extra) {
    if (separator !== undefined) tokens.push(separator, ...model.tokenize(`${file.name}\n`, false));
    else tokens.push(...model.tokenize(SNIPPET, false));
    tokens.push(...model.tokenize(file.text, false));
  }
  if (separator !== undefined) tokens.push(separator, ...model.tokenize('filename\n', false));
  return tokens;
}

function bos(model: LlamaModel): Token[] {
  const token = model.tokens.bos;
  return model.tokens.shouldPrependBosToken && token !== null ? [token] : [];
}

/** A special token by its id in the file's metadata (`tokenizer.ggml.<key>`), else by one of its usual names. */
function specialToken(model: LlamaModel, key: string, names: string[]): Token | undefined {
  const ggml = (model.fileInfo.metadata as { tokenizer?: { ggml?: Record<string, unknown> } }).tokenizer?.ggml;
  const id = ggml?.[key];
  if (typeof id === 'number') return id as Token;
  for (const name of names) {
    const tokens = model.tokenize(name, true);
    if (tokens.length === 1 && model.isSpecialToken(tokens[0])) return tokens[0];
  }
  return undefined;
}
