// The companion compiled ahead into one ES module (plus lazily loaded chunks) in build/companion,
// so a start skips compiling TypeScript module by module through tsx's loader (about half the
// CPU time of a start). bin/hearth.js runs it only while it is newer than every source file;
// otherwise it runs the sources through tsx, so an edit is never hidden behind an old build.
import { copyFileSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
export const BUNDLE = join(root, 'build', 'companion', 'main.js');
// This file too: a build made by an older recipe is stale.
const SOURCES = ['companion/src', 'shared/src', 'package.json', 'tsconfig.companion.json', 'scripts/companion-bundle.js'].map((name) => join(root, name));

/** @param {string} path @returns {number} */
function newestChange(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestChange(join(path, name))), stat.mtimeMs);
}

/** Whether build/companion is there and newer than every source it was made from. */
export function bundleIsFresh() {
  if (!existsSync(BUNDLE)) return false;
  const built = statSync(BUNDLE).mtimeMs;
  return SOURCES.filter(existsSync).every((source) => newestChange(source) <= built);
}

/** Compiles the companion into build/companion (about a second); packages stay in node_modules. */
export async function buildBundle() {
  const { build } = await import('esbuild');
  const outdir = join(root, 'build', 'companion');
  // The image engine and GGUF header threads load their own entries beside the modules that start them.
  const thread = join(root, 'companion', 'src', 'images', 'thread');
  await build({
    entryPoints: {
      main: join(root, 'companion', 'src', 'main.ts'),
      'engine-worker': join(thread, 'engine-worker.ts'),
      'gguf-worker': join(root, 'companion', 'src', 'models', 'gguf-worker.ts'),
    },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'silent',
    write: true,
  });
  copyFileSync(join(thread, 'start.mjs'), join(outdir, 'start.mjs'));
}
