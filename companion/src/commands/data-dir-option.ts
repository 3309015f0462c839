import { resolve } from 'node:path';
import { defaultDataDirectory } from '../store/data-dir.js';

/** `--data-dir DIR` (removed from argv) or HEARTH_DATA_DIR or ~/.hearth. */
export function takeDataDir(argv: string[], env: NodeJS.ProcessEnv): { dataDir: string; rest: string[] } {
  const rest = [...argv];
  const index = rest.findIndex((arg) => arg === '--data-dir' || arg.startsWith('--data-dir='));
  let value: string | undefined;
  if (index >= 0) {
    const arg = rest[index]!;
    value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : rest[index + 1];
    rest.splice(index, arg.includes('=') ? 1 : 2);
  }
  return { dataDir: resolve(value ?? env.HEARTH_DATA_DIR ?? defaultDataDirectory()), rest };
}
