/**
 * Global setup of the `server-engine` test project: the llama-server build must be ready before its
 * tests run. It is built here when absent (CMake, a C++ compiler and git are needed; a few minutes
 * on two cores, once: the build is cached outside the clone, in ~/.cache/hearth or
 * $HEARTH_ENGINE_CACHE), and a build another process runs is waited for.
 */
import { buildServer, clearFailure, serverBuildPaths } from '../../companion/src/inference/server/build.js';

export default async function setup(): Promise<void> {
  const paths = serverBuildPaths();
  if ('unavailable' in paths) throw new Error(`The server-engine tests need the llama-server build, which cannot be made here: ${paths.unavailable}`);
  clearFailure(paths);
  let last = '';
  const result = await buildServer(paths, {
    onProgress: (status) => {
      const line = status.state === 'building' ? `building llama-server for the server-engine tests: ${status.step}` : '';
      if (line && line !== last) process.stderr.write(`${line}\n`);
      last = line;
    },
  });
  if (result.state !== 'ready')
    throw new Error(`The llama-server build for the server-engine tests failed: ${result.state === 'failed' ? result.reason : result.state}`);
}
