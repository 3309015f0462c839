/** The shapes every part of model discovery shares: where a model came from, how to scan, what was found. */
import type { Capability } from '#shared/api/openai.js';

export type ModelSource = 'models-dir' | 'lmstudio' | 'ollama' | 'huggingface' | 'llama.cpp';

export interface LocalModel {
  /** Stable, readable, never contains '/'; chars [a-z0-9._:-]. */
  id: string;
  /** Absolute path of the .gguf (first shard for split models). */
  path: string;
  source: ModelSource;
  /** All shards. */
  sizeBytes: number;
  /** From GGUF metadata `<arch>.context_length`. */
  contextLength: number | null;
  architecture: string | null;
  capabilities: Capability[];
  /** Metadata unreadable (or the model incomplete): listed anyway with the reason. */
  error?: string;
}

export interface ScanOptions {
  modelsDirs: string[];
  externalSources: boolean;
  home?: string;
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
}
