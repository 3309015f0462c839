/**
 * Where a llama-server process listens: a Unix socket in the data folder's engine folder, which is
 * 0700 inside the 0700 data folder, so only the companion's user can connect. A socket's path must
 * fit `sun_path` (107 bytes and a NUL on Linux); when the data folder's path is too long for that,
 * the socket goes into a fresh 0700 folder under the temporary folder instead, and the log says so.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../logger.js';

/** The longest socket path the kernel takes (sun_path less its terminating NUL). */
export const SOCKET_PATH_BYTES = 107;

export interface EngineSocket {
  path: string;
  /** Removes the socket file (and the temporary folder made for it); called once the process has ended. */
  remove(): void;
}

/** A socket file name no earlier process used: llama-server does not bind over an existing file. */
export function socketName(): string {
  return `llama-server-${randomBytes(6).toString('hex')}.sock`;
}

const fits = (path: string) => Buffer.byteLength(path) <= SOCKET_PATH_BYTES;

export function engineSocket(runDir: string, log: Logger): EngineSocket {
  const name = socketName();
  const inRunDir = join(runDir, name);
  if (fits(inRunDir)) return { path: inRunDir, remove: () => rmSync(inRunDir, { force: true }) };
  const base = [tmpdir(), '/tmp'].find((dir) => fits(join(dir, 'hearth-engine-XXXXXX', name))) ?? '/tmp';
  // mkdtemp makes the folder 0700.
  const folder = mkdtempSync(join(base, 'hearth-engine-'));
  const path = join(folder, name);
  log.warn(
    { folder },
    `the data folder's path is too long for a Unix socket (over ${SOCKET_PATH_BYTES} bytes); llama-server listens in a private temporary folder instead`,
  );
  return { path, remove: () => rmSync(folder, { recursive: true, force: true }) };
}
