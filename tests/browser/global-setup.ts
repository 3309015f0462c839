/**
 * The browser tests run against build/web as the companion serves it. Rebuild it when it is
 * missing or older than any web source, so a test never exercises a stale app. The build's report
 * is printed only when it fails.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromiumMissing } from './chromium.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const marker = join(root, 'build/web/sw.js');
const sources = ['web', 'shared/src', 'svelte.config.js', 'vite.config.ts', 'package.json'];

function newest(path: string): number {
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.mtimeMs;
  return readdirSync(path).reduce((latest, name) => Math.max(latest, newest(join(path, name))), stats.mtimeMs);
}

export default function setup(): void {
  const missing = chromiumMissing();
  if (missing) throw new Error(missing);
  const built = existsSync(marker) ? statSync(marker).mtimeMs : 0;
  const changed = Math.max(...sources.map((source) => newest(join(root, source))));
  if (built >= changed) return;
  console.log('[browser tests] building the web app (build/web is missing or stale)…');
  // The build's own report (every chunk, plugin timings) is a hundred lines nobody reads in a test
  // run: it is kept, and shown only when the build fails.
  try {
    execFileSync(process.execPath, [join(root, 'node_modules/vite/bin/vite.js'), 'build'], {
      cwd: root,
      stdio: 'pipe',
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    process.stderr.write(`${stdout ?? ''}${stderr ?? ''}`);
    throw new Error('[browser tests] building the web app failed: its output is above.', { cause: error });
  }
}
