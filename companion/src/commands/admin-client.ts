import { existsSync, readFileSync } from 'node:fs';
import { readAdminToken } from '../access/admin-credential.js';
import { invocation, whereToRun } from '../invocation.js';
import { dataPaths } from '../store/data-dir.js';

/** The admin routes of the running server, called with the data directory's admin credential. */
export interface AdminClient {
  /** The server's loopback address, e.g. http://127.0.0.1:4777. */
  base: string;
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

/**
 * Finds the running server (server.json in the data directory, or `url`) and reads the admin
 * credential (admin-token); a sentence saying what is missing otherwise.
 */
export function adminClient(dataDir: string, url?: string): AdminClient | { problem: string } {
  const paths = dataPaths(dataDir);
  const base = url ?? serverUrl(paths.server);
  if (!base) return { problem: `No Hearth server is running on ${dataDir}. Start it with: ${invocation().start}${whereToRun()} (or pass --url).` };
  const token = readAdminToken(paths.adminToken);
  if (!token) {
    return { problem: `There is no admin credential in ${paths.adminToken} (it is made when Hearth first starts), or this user cannot read it.` };
  }
  return {
    base,
    fetch: (path, init = {}) => {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${token}`);
      return fetch(`${base}${path}`, { ...init, headers });
    },
  };
}

function serverUrl(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { url: string }).url;
}
