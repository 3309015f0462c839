/** Messages between the page (host.ts) and the engine worker (engine.worker.ts). */
import type { BrowserEngine, EngineKind } from './types';

export type EngineMethod = Exclude<keyof BrowserEngine, 'kind'>;

export type ToWorker = { type: 'call'; id: number; engine: EngineKind; method: EngineMethod; args: unknown[] } | { type: 'cancel'; id: number };

export type FromWorker =
  | { type: 'result'; id: number; value: unknown }
  | { type: 'error'; id: number; name: string; message: string; code: string | null }
  | { type: 'delta'; id: number; text: string }
  | { type: 'progress'; id: number; fraction: number | null; text: string };
