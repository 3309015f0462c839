/**
 * A companion model slow enough (~150 tokens/s on one core) that "stop" and "the companion
 * went away" land in the middle of a reply rather than racing its end: the generated "small"
 * test model, next to the tiny one, as model id `slow`.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeTinyModel } from '../../scripts/gguf/write-model.js';
import { newDataDir, startServer, type RunningServer } from '../helpers/server.js';

/** `hearth serve` with `tiny` and `slow` in its models folder (written there, removed with the data folder). */
export async function startServerWithSlowModel(env: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
  const dataDir = await newDataDir();
  mkdirSync(join(dataDir, 'models'), { recursive: true });
  await writeTinyModel(join(dataDir, 'models', 'slow.gguf'), { size: 'small', seed: 1 });
  return startServer({ dataDir, env });
}
