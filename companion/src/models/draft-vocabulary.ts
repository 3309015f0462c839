/**
 * Whether a draft model can draft for a model (speculative decoding, inference/server/draft.ts):
 * the same tokenizer model, the same special tokens, the same tokens in the same order. Both
 * headers are walked by the guarded reader first; only then is the token list read and compared.
 */
import { statSync } from 'node:fs';
import { loadBinding } from '../inference/binding.js';
import type { DraftChoice } from '../inference/server/draft.js';
import { readGgufHeader } from './gguf-header.js';

const SPECIAL = ['bos', 'eos', 'unknown', 'padding', 'eot', 'eom', 'sep'].map((name) => `tokenizer.ggml.${name}_token_id`);

/** Why the draft at `draftPath` cannot draft for the model at `targetPath`, or undefined when it can. */
export async function draftIncompatibility(targetPath: string, draftPath: string): Promise<string | undefined> {
  const [target, draft] = await Promise.all([readGgufHeader(targetPath), readGgufHeader(draftPath)]);
  const tokenizer = 'tokenizer.ggml.model';
  if (target[tokenizer] !== draft[tokenizer])
    return `its tokenizer (${String(draft[tokenizer] ?? 'none')}) is not the model's (${String(target[tokenizer] ?? 'none')})`;
  for (const key of SPECIAL)
    if (target[key] !== draft[key])
      return `its special token ${key.slice('tokenizer.ggml.'.length)} is ${String(draft[key] ?? 'unset')}, the model's ${String(target[key] ?? 'unset')}`;
  const [targetTokens, draftTokens] = await Promise.all([tokens(targetPath), tokens(draftPath)]);
  if (targetTokens.length !== draftTokens.length) return `its vocabulary has ${draftTokens.length} tokens, the model's ${targetTokens.length}`;
  const differs = targetTokens.findIndex((token, index) => token !== draftTokens[index]);
  if (differs >= 0) return `its token ${differs} differs from the model's`;
  return undefined;
}

async function tokens(path: string): Promise<readonly string[]> {
  const { readGgufFileInfo } = await loadBinding();
  const info = await readGgufFileInfo(path, { readTensorInfo: false });
  return (info.metadata as { tokenizer?: { ggml?: { tokens?: readonly string[] } } }).tokenizer?.ggml?.tokens ?? [];
}

/** Resolves a model's configured draft: its file, checked against the model's vocabulary. */
export async function chooseDraft(targetPath: string, id: string, findPath: (id: string) => Promise<string | undefined>): Promise<DraftChoice> {
  try {
    const path = await findPath(id);
    if (!path) return { off: `draft ${id} is not a local model Hearth lists` };
    if (path === targetPath) return { off: `draft ${id} is the model itself` };
    const problem = await draftIncompatibility(targetPath, path);
    if (problem) return { off: `draft ${id} does not share the model's vocabulary: ${problem}` };
    return { draft: { id, path, bytes: statSync(path).size } };
  } catch (error) {
    return { off: `draft ${id} could not be read: ${error instanceof Error ? error.message : String(error)}` };
  }
}
