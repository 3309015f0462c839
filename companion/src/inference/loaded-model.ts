/** What the engine holds of one loaded chat model, whichever engine runs it. */
import type { EngineKind, ServerBinary } from '#shared/api/admin.js';
import type { ThreadChoice } from './in-process/thread-tuner.js';
import type { GenerationText, ModelRequest } from './text-pipeline.js';
import type { GenerationResult, ModelFile } from './types.js';

export interface LoadedStatus {
  id: string;
  engine: EngineKind;
  /** Why this engine runs the model, in words. */
  engineReason: string;
  /** The most threads a decode may use. */
  threads: number;
  /** With threads: auto, the count chosen per batch size and what each candidate measured (in-process only). */
  threadChoices: ThreadChoice[];
  /** Decode steps since the model was loaded (in-process only). */
  steps: number;
  contextSize: number;
  sequences: number;
  busy: number;
  queued: number;
  /** Tokens generated since the model was loaded (counted as they stream). */
  generatedTokens: number;
  /** Weights plus context state, as llama.cpp reports them (an embedding model: its share of the budget). */
  memoryBytes?: number;
  /** The server engine's process. */
  process?: { pid: number; restarts: number };
  /** Prompt tokens the server evaluated and reused from its caches since the model was loaded (server engine). */
  promptTokens?: { evaluated: number; reused: number };
  /** Server engine, a draft model configured: the draft and its proposed and accepted tokens since the load, or why it is off. */
  draft?: { model: string; tokens: number; accepted: number } | { off: string };
  /** The multimodal projector loaded beside the model (server engine). */
  projector?: string;
  /** The llama-server binary the process runs (server engine). */
  build?: ServerBinary;
}

export interface LoadedModel {
  readonly info: ModelFile;
  readonly engine: EngineKind;
  readonly engineReason: string;
  /** Its share of the memory budget. */
  readonly bytes: number;
  readonly busy: number;
  lastUsed: number;
  idleTimer?: NodeJS.Timeout;
  /** Waits for a sequence (or slot), generates with its text through the pipeline (text-pipeline.ts), and frees it. */
  run(request: ModelRequest, text: GenerationText<'timed'>): Promise<GenerationResult>;
  /** The request's prompt tokens as `run` would render them (token-count.ts). */
  countTokens(request: ModelRequest): Promise<number>;
  status(): LoadedStatus;
  /** Fails every request waiting for a sequence (the model is being unloaded). */
  rejectWaiting(error: unknown): void;
  /** Frees the model; called once, by the engine. */
  dispose(): Promise<void>;
}
