/** server.json: where the commands (`hearth open`, `hearth keys`, ...) find the running server of a data folder. */
import { existsSync, mkdirSync } from 'node:fs';
import type { DataPaths } from '../store/data-dir.js';
import { writeFileAtomic } from '../store/files.js';
import { takePidFile } from '../store/lock.js';

/** Says where this process listens (its loopback address), for the commands run on the same data folder. */
export function writeServerFile(paths: Pick<DataPaths, 'server'>, url: string): void {
  writeFileAtomic(paths.server, JSON.stringify({ pid: process.pid, url }), 0o600);
}

/**
 * The data folder was deleted or moved away while this server runs: a folder is made again at
 * its path (0700) with what the commands need to reach the server (server.json and the admin
 * credential, so `hearth open` still signs the app in and shows what happened) and the lock (so
 * a second start finds this server instead of starting beside it). Nothing else: a restart
 * begins there with a new, empty data folder. Files already there (another folder put in its
 * place) are kept, except server.json, which names this server.
 */
export function restoreServerFiles(paths: DataPaths, url: string, adminToken: string): void {
  mkdirSync(paths.root, { recursive: true, mode: 0o700 });
  writeServerFile(paths, url);
  if (!existsSync(paths.adminToken)) writeFileAtomic(paths.adminToken, `${adminToken}\n`, 0o600);
  if (!existsSync(paths.lock)) takePidFile(paths.lock, 0o600);
}
