import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/*
 * Test servers started through these helpers get their admin credential sent for them: once a
 * server is registered here, a global fetch() to its /admin routes without an Authorization
 * header carries `Bearer <admin-token>`, as the CLI does. Tests of the credential itself use
 * `fetchWithoutAdmin`, the unpatched fetch.
 */

export const fetchWithoutAdmin: typeof fetch = globalThis.fetch.bind(globalThis);

const tokens = new Map<string, string>();
const PATCHED = Symbol.for('hearth.test.admin-fetch');

/** Sends the admin credential of `dataDir` on /admin requests to `url`'s origin from now on. */
export function registerAdminServer(url: string, dataDir: string): void {
  const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  const origin = new URL(url);
  tokens.set(origin.origin, token);
  // A server on a wildcard address is reached through loopback too.
  if (['0.0.0.0', '[::]'].includes(origin.hostname)) tokens.set(`http://127.0.0.1:${origin.port}`, token);
  install();
}

/** The data directory a `hearth serve` command line and environment select. */
export function dataDirOf(args: string[], env: NodeJS.ProcessEnv): string {
  const index = args.findIndex((arg) => arg === '--data-dir' || arg.startsWith('--data-dir='));
  if (index >= 0) return resolve(args[index]!.includes('=') ? args[index]!.slice(args[index]!.indexOf('=') + 1) : args[index + 1]!);
  return resolve(env.HEARTH_DATA_DIR ?? join(env.HOME ?? homedir(), '.hearth'));
}

function install(): void {
  const global = globalThis as typeof globalThis & { [PATCHED]?: true };
  if (global[PATCHED]) return;
  global[PATCHED] = true;
  globalThis.fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const token = tokens.get(url.origin);
    if (!token || !url.pathname.startsWith('/admin')) return fetchWithoutAdmin(input, init);
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    if (headers.has('authorization')) return fetchWithoutAdmin(input, init);
    headers.set('authorization', `Bearer ${token}`);
    return fetchWithoutAdmin(input instanceof Request ? new Request(input, { ...init, headers }) : input, { ...init, headers });
  };
}
