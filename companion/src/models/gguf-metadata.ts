/**
 * What the registry needs from a GGUF header (architecture, context length, whether it
 * is an embedding model), read with node-llama-cpp and cached by (path, size, mtime).
 */
import { readGgufFileInfo } from 'node-llama-cpp';
import type { Capability } from '#shared/api/openai.js';

export interface GgufSummary {
  architecture: string | null;
  contextLength: number | null;
  capabilities: Capability[];
  /** Projectors (mmproj/clip) and LoRA adapters are not models of their own. */
  kind: 'model' | 'projector' | 'adapter';
  error?: string;
}

type Flat = Record<string, unknown>;

/** Architectures that only produce embeddings. */
const EMBEDDING_ARCHITECTURES = new Set([
  'bert',
  'nomic-bert',
  'nomic-bert-moe',
  'jina-bert-v2',
  'jina-bert-v3',
  'modern-bert',
  'neo-bert',
  'eurobert',
  't5encoder',
  'gemma-embedding',
]);

/** Large arrays the registry never looks at; skipping them keeps the parsed header small. */
const IGNORED_KEYS = ['tokenizer.ggml.tokens', 'tokenizer.ggml.scores', 'tokenizer.ggml.token_type', 'tokenizer.ggml.merges'];

const cache = new Map<string, { sizeBytes: number; mtimeMs: number; summary: GgufSummary }>();

/** Reads (or returns the cached) summary of the GGUF at path; never throws. */
export async function readGgufSummary(path: string, sizeBytes: number, mtimeMs: number): Promise<GgufSummary> {
  const cached = cache.get(path);
  if (cached && cached.sizeBytes === sizeBytes && cached.mtimeMs === mtimeMs) return cached.summary;
  const summary: GgufSummary =
    sizeBytes === 0 ? { architecture: null, contextLength: null, capabilities: [], kind: 'model', error: 'the file is empty' } : await readUncached(path);
  cache.set(path, { sizeBytes, mtimeMs, summary });
  return summary;
}

/** Drops cached headers of files a scan no longer found, so the cache cannot grow without bound. */
export function pruneGgufSummaryCache(keep: Set<string>): void {
  for (const path of cache.keys()) if (!keep.has(path)) cache.delete(path);
}

async function readUncached(path: string): Promise<GgufSummary> {
  try {
    const info = await readGgufFileInfo(path, {
      readTensorInfo: false,
      sourceType: 'filesystem',
      spliceSplitFiles: false,
      logWarnings: false,
      ignoreKeys: IGNORED_KEYS,
    });
    return summarize(flatten(info.metadata as unknown as Record<string, unknown>));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      architecture: null,
      contextLength: null,
      capabilities: [],
      kind: 'model',
      error: `cannot read GGUF metadata: ${reason}`,
    };
  }
}

/** Turns node-llama-cpp's nested metadata back into dotted GGUF keys. */
function flatten(nested: Record<string, unknown>, prefix = '', into: Flat = {}): Flat {
  for (const [key, value] of Object.entries(nested)) {
    const full = prefix === '' ? key : `${prefix}.${key}`;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      flatten(value as Record<string, unknown>, full, into);
    } else {
      into[full] = value;
    }
  }
  return into;
}

function toNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'bigint') return Number(value);
  return null;
}

export function summarize(metadata: Flat): GgufSummary {
  const architecture = typeof metadata['general.architecture'] === 'string' ? metadata['general.architecture'] : null;
  const generalType = typeof metadata['general.type'] === 'string' ? metadata['general.type'].toLowerCase() : '';
  const contextLength = architecture ? toNumber(metadata[`${architecture}.context_length`]) : null;
  let kind: GgufSummary['kind'] = 'model';
  if (architecture === 'clip' || generalType === 'mmproj') kind = 'projector';
  else if (generalType === 'adapter') kind = 'adapter';
  const hasChatTemplate = Object.keys(metadata).some((key) => key.startsWith('tokenizer.chat_template'));
  const pooling = architecture ? toNumber(metadata[`${architecture}.pooling_type`]) : null;
  // pooling_type 0 is llama.cpp's LLAMA_POOLING_TYPE_NONE: no pooling, so not an embedding model.
  const embedding = (architecture !== null && EMBEDDING_ARCHITECTURES.has(architecture)) || (pooling !== null && pooling !== 0 && !hasChatTemplate);
  const capabilities: Capability[] = embedding ? ['embedding'] : ['chat', 'tools'];
  return { architecture, contextLength, capabilities, kind };
}
