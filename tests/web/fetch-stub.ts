import { vi } from 'vitest';

/** Answers the app's requests by (path, init) instead of the network. */
export type Handler = (path: string, init: RequestInit) => Response | Promise<Response>;

/** Replaces the global fetch with `handler` (vi.unstubAllGlobals puts it back); the mock records every call. */
export function respond(handler: Handler) {
  const fetch = vi.fn(async (input: RequestInfo | URL, init: RequestInit = {}) => handler(String(input), init));
  vi.stubGlobal('fetch', fetch);
  return fetch;
}
