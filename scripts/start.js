#!/usr/bin/env node
// `npm start`: builds the PWA when its sources are newer than the build, then runs `hearth serve`
// with the arguments given after `--`.
import { spawnSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = join(root, 'build', 'web', 'index.html');

function newestChange(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestChange(join(path, name))), stat.mtimeMs);
}

const sources = ['web', 'shared', 'svelte.config.js', 'vite.config.ts'].map((name) => join(root, name)).filter(existsSync);
const stale = !existsSync(built) || sources.some((source) => newestChange(source) > statSync(built).mtimeMs);
if (stale) {
  process.stderr.write('Building the web app...\n');
  const build = spawnSync('npm', ['run', 'build:web', '--silent'], { cwd: root, stdio: ['ignore', 2, 2] });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const args = process.argv.slice(2);
const child = spawn(process.execPath, [join(root, 'bin', 'hearth.js'), ...(args[0] && !args[0].startsWith('-') ? args : ['serve', ...args])], {
  stdio: 'inherit',
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
