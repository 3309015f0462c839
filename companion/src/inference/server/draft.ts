/**
 * Speculative decoding on the llama-server engine: a smaller model of the same vocabulary (the
 * draft, `models.overrides.<id>.draft`) proposes tokens that the model checks in one batch. The
 * draft is used only when its vocabulary is the model's own: the same tokenizer model, the same
 * tokens in the same order, and the same special tokens; otherwise the model loads without it and
 * the reason is on its status (the check: models/draft-vocabulary.ts).
 */

/** Tokens the draft proposes per step (llama-server's --spec-draft-n-max); it stops early when unsure. */
export const DRAFT_MAX_TOKENS = 16;

export interface DraftModel {
  /** The draft's Hearth model id. */
  id: string;
  path: string;
  bytes: number;
}

/** What a model's load makes of its configured draft: used, or left off with the reason. */
export type DraftChoice = { draft: DraftModel } | { off: string };

/**
 * llama-server's flags for a draft on the CPU or the GPU: its file, how many tokens it proposes, its
 * threads. `sharedPool` says whether the binary's threads come from one OpenMP pool (the native
 * build): without it the model and its draft each spin a pool of their own, and on a CPU with
 * both at every core generation fell to a fifth of the model alone (2 cores, a generated pair:
 * 63-73 tok/s against 277-308 alone); the draft then runs on one thread (329-343 tok/s). With the
 * pool shared, the draft takes the model's threads (513-734 tok/s against 284-372 alone).
 */
export function draftArgs(draft: DraftModel, threads: number, gpu: boolean, sharedPool: boolean): string[] {
  const own = gpu || sharedPool ? threads : 1;
  return [
    ['--spec-type', 'draft-simple', '--spec-draft-model', draft.path],
    ['--spec-draft-n-max', String(DRAFT_MAX_TOKENS), '--spec-draft-n-min', '0'],
    ['-td', String(own), '-tbd', String(own)],
    gpu ? [] : ['--spec-draft-ngl', '0'],
  ].flat();
}
