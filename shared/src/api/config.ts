/** The configuration document (`<data-dir>/config.yaml`, `version: 1`). Secrets appear only as references. */

/** `secret:NAME` (from the secrets file) or `env:NAME` (from the environment). */
export type SecretReference = `secret:${string}` | `env:${string}`;

export interface ServerSettings {
  host: string;
  port: number;
  /** Largest accepted request body, in MiB. */
  body_limit_mb: number;
}

export interface ModelSettings {
  /** Extra folders scanned for .gguf files, besides `<data-dir>/models`. */
  dirs: string[];
  /** Also list models already on disk from LM Studio, Ollama, the Hugging Face cache and llama.cpp. */
  external_sources: boolean;
  gpu: 'auto' | 'cpu';
  threads: number | 'auto';
  context_size: number;
  parallel: number;
  queue_limit: number;
  idle_unload_seconds: number;
  /** Memory the loaded models may use together; 0 means half of the machine's memory. */
  memory_budget_mb: number;
}

export interface ProviderSettings {
  name: string;
  base_url: string;
  api_key?: SecretReference;
  models?: string[];
  headers?: Record<string, string>;
  timeout_ms?: number;
}

export interface ConfigDocument {
  version: 1;
  server: ServerSettings;
  models: ModelSettings;
  providers: ProviderSettings[];
}
