import { vi } from 'vitest';

/**
 * Replaces the global fetch (for the web tests, which run the app's modules in jsdom) with a mock
 * that answers each request through `handler`, given the request's path or URL and its init;
 * `vi.unstubAllGlobals()` puts the real one back. Returns the mock, to read its calls.
 */
export function stubFetch(handler: (path: string, init: RequestInit) => Response | Promise<Response>) {
  const fetch = vi.fn(async (input: RequestInfo | URL, init: RequestInit = {}) => handler(String(input), init));
  vi.stubGlobal('fetch', fetch);
  return fetch;
}
