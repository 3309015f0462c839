#!/usr/bin/env node
// `npm start`: builds the PWA when its sources are newer than the build (one line of progress,
// the build's own output only when it fails) and the companion when its sources are newer than
// build/companion, then runs `hearth serve` with the arguments given after `--`, in this same
// process: a terminal's Ctrl+C then reaches one Hearth, not two.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBundle, bundleIsFresh } from './companion-bundle.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = join(root, 'build', 'web', 'index.html');

function newestChange(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestChange(join(path, name))), stat.mtimeMs);
}

/** Runs `vite build` with its output kept back; resolves with the exit code and that output. */
function buildWeb() {
  return new Promise((resolve) => {
    const build = spawn(process.execPath, [join(root, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'warn'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    build.stdout.on('data', (chunk) => (output += chunk));
    build.stderr.on('data', (chunk) => (output += chunk));
    build.once('error', (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    build.once('close', (code, signal) => resolve({ code: code ?? 1, signal, output }));
  });
}

const sources = ['web', 'shared', 'svelte.config.js', 'vite.config.ts'].map((name) => join(root, name)).filter(existsSync);
const stale = !existsSync(built) || sources.some((source) => newestChange(source) > statSync(built).mtimeMs);
if (stale) {
  const started = Date.now();
  process.stderr.write('Building the app (first start, or after an update)…');
  const { code, signal, output } = await buildWeb();
  // Ctrl+C during the build: the build stopped, and so does this.
  if (signal) {
    process.stderr.write(' stopped.\n');
    process.exit(130);
  }
  if (code !== 0) {
    process.stderr.write(' failed:\n\n');
    // SvelteKit's advice to run `npm run preview` is for its own server, not Hearth's.
    process.stderr.write(output.replace(/^.*npm run preview.*\n?/gm, ''));
    process.exit(code);
  }
  process.stderr.write(` done in ${Math.round((Date.now() - started) / 1000)} s.\n`);
}

// The companion compiled ahead starts in about half the time; made again after any change (about a second).
if (!bundleIsFresh()) {
  try {
    await buildBundle();
  } catch (error) {
    // Not fatal: bin/hearth.js runs the sources through tsx instead.
    process.stderr.write(`The companion could not be compiled ahead (${error.message.split('\n')[0]}); starting from its sources.\n`);
  }
}

// `npm start -- --port 0` means `hearth serve --port 0`; `npm start -- open` runs that command.
const args = process.argv.slice(2);
process.argv = [process.argv[0], join(root, 'bin', 'hearth.js'), ...(args[0] && !args[0].startsWith('-') ? args : ['serve', ...args])];
await import('../bin/hearth.js');
