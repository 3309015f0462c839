/**
 * What the registry needs from a GGUF header (architecture, context length, whether it
 * is an embedding model, what else it can do), checked and read on the header thread (gguf-thread.ts) and cached
 * by (path, size, mtime).
 */
import type { Capability } from '#shared/api/openai.js';
import { GgufThread } from './gguf-thread.js';

export interface GgufSummary {
  architecture: string | null;
  contextLength: number | null;
  capabilities: Capability[];
  /** Projectors (mmproj/clip) and LoRA adapters are not models of their own. */
  kind: 'model' | 'projector' | 'adapter';
  /** A model's embedding size (`<arch>.embedding_length`); a projector's output size (its `projection_dim`), which must be the model's. */
  embeddingLength?: number | null;
  /** What a projector encodes (`clip.has_vision_encoder`, `clip.has_audio_encoder`). */
  modalities?: { vision: boolean; audio: boolean };
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

const cache = new Map<string, { sizeBytes: number; mtimeMs: number; summary: GgufSummary }>();
const thread = new GgufThread();

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
    return summarize(await thread.read(path));
  } catch (error) {
    return { architecture: null, contextLength: null, capabilities: [], kind: 'model', error: `cannot read GGUF metadata: ${reasonOf(error)}` };
  }
}

/**
 * Why the GGUF at path cannot be read, checked now (never cached); null when it can. A download
 * is checked with it before it joins the models folder.
 */
export function ggufProblem(path: string): Promise<string | null> {
  return thread.read(path).then(() => null, reasonOf);
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
  const capabilities: Capability[] = embedding ? ['embedding'] : generativeCapabilities(metadata);
  if (kind === 'projector') return { architecture, contextLength, capabilities: [], kind, ...projectorShape(metadata) };
  const embeddingLength = architecture ? toNumber(metadata[`${architecture}.embedding_length`]) : null;
  return { architecture, contextLength, capabilities, kind, embeddingLength };
}

/** A projector's modalities and output size (the text model's embedding size it was made for). */
function projectorShape(metadata: Flat): Pick<GgufSummary, 'embeddingLength' | 'modalities'> {
  const vision = metadata['clip.has_vision_encoder'] === true;
  const audio = metadata['clip.has_audio_encoder'] === true;
  const embeddingLength = toNumber(metadata[vision ? 'clip.vision.projection_dim' : 'clip.audio.projection_dim']);
  return { embeddingLength, modalities: { vision, audio } };
}

/** The FIM token ids' keys: today's names, then the older ones (both are read by llama.cpp). */
const FIM_KEYS = [
  ['tokenizer.ggml.fim_pre_token_id', 'tokenizer.ggml.fim_suf_token_id', 'tokenizer.ggml.fim_mid_token_id'],
  ['tokenizer.ggml.prefix_token_id', 'tokenizer.ggml.suffix_token_id', 'tokenizer.ggml.middle_token_id'],
];

/** Marks of a chat template whose format has a thought segment (Qwen3, DeepSeek-R1, gpt-oss's analysis channel). */
const THOUGHT_MARKS = ['<think>', 'enable_thinking', '<|channel|>analysis'];

/**
 * What a model that is not an embedding model can do: chat (with tools) and raw completions always;
 * fill-in-the-middle when its file names the three FIM tokens; reasoning when its chat template
 * has a thought segment.
 */
function generativeCapabilities(metadata: Flat): Capability[] {
  const capabilities: Capability[] = ['chat', 'completion'];
  if (FIM_KEYS.some((keys) => keys.every((key) => toNumber(metadata[key]) !== null))) capabilities.push('fim');
  capabilities.push('tools');
  const template = typeof metadata['tokenizer.chat_template'] === 'string' ? metadata['tokenizer.chat_template'] : '';
  if (THOUGHT_MARKS.some((mark) => template.includes(mark))) capabilities.push('reasoning');
  return capabilities;
}
