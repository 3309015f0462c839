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
  /** The multimodal projector it loads with (found beside it, or named in `models.overrides.<id>.projector`). */
  projector?: ProjectorFile;
  /** Why a projector found for it (or named for it) is not used; the model still runs, on text only. */
  projectorProblem?: string;
}

/** A multimodal projector (`mmproj`): the image or audio encoder a model needs to take media. */
export interface ProjectorFile {
  path: string;
  sizeBytes: number;
  vision: boolean;
  audio: boolean;
}

export interface ScanOptions {
  modelsDirs: string[];
  externalSources: boolean;
  /** Model id -> its projector file as configured (`models.overrides.<id>.projector`), or 'none' for none. */
  projectors?: Record<string, string>;
  home?: string;
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
}
