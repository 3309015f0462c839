/** Wire types of the loopback-only /admin routes. */

export interface LoadedModelStatus {
  id: string;
  threads: number;
  context_size: number;
  sequences: number;
  busy: number;
  queued: number;
  generated_tokens: number;
}

export interface ProviderStatus {
  name: string;
  /** The base URL without user info, query or fragment. */
  base_url: string;
  ok: boolean;
  error?: string;
  models: number;
}

export interface ServerStatus {
  version: string;
  address: { host: string; port: number } | null;
  data_dir: string;
  models_dirs: string[];
  loaded: LoadedModelStatus[];
  providers: ProviderStatus[];
}

/** POST /admin/session: the one-time code from a sign-in link (the part after `#`). */
export interface SignInRequest {
  code: string;
}

/** POST /admin/session/links: a one-time sign-in link for the app. */
export interface SignInLink {
  /** `http://127.0.0.1:PORT/sign-in#CODE`: opening it signs the app in on this machine. */
  url: string;
  expires_at: string;
}
