/**
 * A companion model slow enough (~150 tokens/s on one core) that "stop" and "the companion
 * went away" land in the middle of a reply rather than racing its end: the generated "small"
 * test model, next to the tiny one, as model id `slow`.
 */
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTinyModel } from '../../scripts/gguf/write-model.js';
import { newDataDir, startServer, type RunningServer } from '../helpers/server.js';

let pending: Promise<string> | undefined;

function smallModelPath(): Promise<string> {
  pending ??= (async () => {
    const folder = join(tmpdir(), 'hearth-test-models');
    await mkdir(folder, { recursive: true });
    const path = join(folder, 'small-1.gguf');
    const temporary = `${path}.${process.pid}-${randomUUID()}.tmp`;
    await writeTinyModel(temporary, { size: 'small', seed: 1 });
    await rename(temporary, path);
    return path;
  })();
  return pending;
}

/** `hearth serve` with `tiny` and `slow` in its models folder. */
export async function startServerWithSlowModel(env: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
  const dataDir = await newDataDir();
  mkdirSync(join(dataDir, 'models'), { recursive: true });
  copyFileSync(await smallModelPath(), join(dataDir, 'models', 'slow.gguf'));
  return startServer({ dataDir, env });
}
