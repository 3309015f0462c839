/** The one interface every in-browser engine implements; engines run inside engine.worker.ts. */

export type EngineKind = 'wllama' | 'webllm';

/** The context wllama loads every model with: a request's prompt and reply share it. */
export const WLLAMA_CONTEXT = 2048;

export interface EngineStatus {
  kind: EngineKind;
  /** Whether this browser can run the engine at all. */
  available: boolean;
  /** Why it cannot, or what limits it, in words for the user. */
  reason: string | null;
  /** What was detected, e.g. the WebGPU adapter and its features. */
  details: Record<string, string | boolean | null>;
}

export interface BrowserModel {
  engine: EngineKind;
  id: string;
  name: string;
  sizeBytes: number | null;
  /** Stored in this browser: usable without the network. */
  stored: boolean;
  /** Can run here (a WebGPU model may need a feature the adapter lacks). */
  runnable: boolean;
  /** Why it cannot run, when it cannot. */
  reason: string | null;
  /** Where the file came from, e.g. "companion: tiny" or "file: model.gguf". */
  origin: string | null;
}

export interface EngineMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface EngineChatRequest {
  model: string;
  messages: EngineMessage[];
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
}

export interface EngineChatResult {
  text: string;
  finishReason: 'stop' | 'length' | null;
  promptTokens: number | null;
  completionTokens: number | null;
  /** Generation speed reported by the engine itself, when it reports one. */
  tokensPerSecond: number | null;
}

export interface LoadProgress {
  /** 0..1, or null when unknown. */
  fraction: number | null;
  text: string;
}

export interface BrowserEngine {
  readonly kind: EngineKind;
  status(): Promise<EngineStatus>;
  models(): Promise<BrowserModel[]>;
  /** Makes `model` ready (downloading it first when the engine does that itself). */
  load(model: string, onProgress: (progress: LoadProgress) => void): Promise<void>;
  chat(request: EngineChatRequest, onDelta: (text: string) => void, signal: AbortSignal): Promise<EngineChatResult>;
  unload(): Promise<void>;
  /** Removes a stored model from the browser. */
  remove(model: string): Promise<void>;
}

/** An error an engine reports to the user as is. */
export class EngineError extends Error {
  constructor(
    message: string,
    readonly code: 'unavailable' | 'not_stored' | 'offline' | 'load_failed' | 'invalid_file' | 'busy' | 'failed' = 'failed',
  ) {
    super(message);
    this.name = 'EngineError';
  }
}
