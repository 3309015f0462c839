#!/usr/bin/env node
/**
 * The install's part in the llama-server engine (run by `postinstall`): when CMake, a C++ compiler
 * and git are present, starts `hearth engine build` as a detached background process and returns
 * at once, so `npm install` is never slowed by the build (a few minutes) and never fails because
 * of it. The build waits for the install to finish writing node_modules before it starts. Without
 * the tools it does nothing; the companion then runs models on the in-process engine and says why.
 * HEARTH_ENGINE_BUILD_AT_INSTALL=0 turns it off.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const has = (command) => {
  try {
    return spawnSync(command, ['--version'], { stdio: 'ignore', timeout: 10_000 }).status === 0;
  } catch {
    return false;
  }
};

try {
  const hearth = fileURLToPath(new URL('../bin/hearth.js', import.meta.url));
  const wanted = process.env.HEARTH_ENGINE_BUILD_AT_INSTALL !== '0' && process.platform === 'linux';
  const tools = has('cmake') && has('git') && ['c++', 'g++', 'clang++'].some(has);
  if (wanted && tools && existsSync(hearth)) {
    // A short pause lets npm finish the install (other packages' scripts) before the build reads node_modules.
    const child = spawn(
      process.execPath,
      [
        '-e',
        `setTimeout(() => require('node:child_process').spawn(process.execPath, [${JSON.stringify(hearth)}, 'engine', 'build', '--quiet', '--if-possible'], { stdio: 'ignore' }), 30000)`,
      ],
      {
        detached: true,
        stdio: 'ignore',
      },
    );
    child.unref();
    console.log('hearth: building the llama-server engine in the background (`npm run hearth -- engine status` shows its progress).');
  }
} catch (error) {
  // The install must not fail for the engine's sake.
  console.log(`hearth: the llama-server engine will be built later (${error instanceof Error ? error.message : String(error)}).`);
}
