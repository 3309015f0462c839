import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineSocket, SOCKET_PATH_BYTES } from '../../../companion/src/inference/server/socket.js';
import { silentLogger } from '../../../companion/src/logger.js';
import { tempFolder } from '../../helpers/temp.js';

/* Where llama-server's Unix socket goes: the engine folder, or a private temporary folder when that path is too long for a socket. */

describe('the engine socket', () => {
  it('lies in the engine folder when its path fits', () => {
    const runDir = tempFolder('engine');
    const socket = engineSocket(runDir, silentLogger);
    expect(dirname(socket.path)).toBe(runDir);
    expect(socket.path).toMatch(/\.sock$/);
    expect(Buffer.byteLength(socket.path)).toBeLessThanOrEqual(SOCKET_PATH_BYTES);
  });

  it('moves to a 0700 temporary folder, and says so, when the data folder is too deep', () => {
    const runDir = join(tempFolder('engine'), 'a-data-folder-with-a-long-name'.repeat(4), 'engine');
    const warnings: string[] = [];
    const socket = engineSocket(runDir, { ...silentLogger, warn: (_fields: unknown, message: string) => warnings.push(message) } as typeof silentLogger);
    expect(Buffer.byteLength(socket.path)).toBeLessThanOrEqual(SOCKET_PATH_BYTES);
    expect(socket.path.startsWith(runDir)).toBe(false);
    expect(statSync(dirname(socket.path)).mode & 0o777).toBe(0o700);
    expect(warnings.join()).toMatch(/too long for a Unix socket/);
    socket.remove();
    expect(existsSync(dirname(socket.path))).toBe(false);
  });
});
