/**
 * The llama-server build from node-llama-cpp's bundled llama.cpp source, against its prebuilt
 * libraries. The project's global setup builds it (or finds it in the cache); these check what
 * was built, and how a failed build is reported.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildPlace,
  buildServer,
  clearFailure,
  compileProgress,
  readBuildState,
  serverBuildPaths,
  type ServerBuildPaths,
} from '../../../companion/src/inference/server/build.js';
import { ServerBuild } from '../../../companion/src/inference/server/build-service.js';
import { tempFolder } from '../../helpers/temp.js';

describe('the llama-server build', () => {
  it('is ready, compiled only the server on top of the prebuilt libraries, and links to them', () => {
    const paths = new ServerBuild().ready();
    expect(paths).toBeDefined();
    const info = JSON.parse(readFileSync(paths!.info, 'utf8')) as { tag: string; compile_steps: number; build_seconds: number };
    expect(info.tag).toBe(paths!.source.tag);
    // The whole llama.cpp tree is over 300 steps; the server, mtmd and vendored helpers about 80.
    expect(info.compile_steps).toBeGreaterThan(20);
    expect(info.compile_steps).toBeLessThan(150);
    const needed = [...spawnSync('readelf', ['-d', paths!.binary], { encoding: 'utf8' }).stdout.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map(
      (match) => match[1],
    );
    const { libraries } = paths!;
    expect(needed).toEqual(expect.arrayContaining([libraries.llama, libraries.llamaCommon, libraries.ggml, libraries.ggmlBase]));
    // It runs on them (ggml's CPU variants are found in the prebuilt folder).
    const version = spawnSync(paths!.binary, ['--version'], { cwd: libraries.dir, env: { ...process.env, LD_LIBRARY_PATH: libraries.dir }, encoding: 'utf8' });
    expect(version.status).toBe(0);
    expect(version.stdout + version.stderr).toMatch(/version: /);
  });

  it('reports a failed build with its reason until it is tried again', async () => {
    const real = serverBuildPaths() as ServerBuildPaths;
    const root = tempFolder('engine-build');
    const paths: ServerBuildPaths = { ...real, ...buildPlace(root), source: { ...real.source, bundle: join(root, 'missing.bundle') } };
    // A build that was killed left its lock (no process has this pid): it is taken over.
    writeFileSync(paths.lock, '999999999');
    const steps: string[] = [];
    const result = await buildServer(paths, { onProgress: (status) => status.state === 'building' && steps.push(status.step) });
    expect(steps[0]).toBe('unpacking the llama.cpp source');
    expect(result).toMatchObject({ state: 'failed', reason: expect.stringMatching(/the llama-server build failed: git clone .*missing\.bundle/) });
    expect(readBuildState(paths)).toMatchObject({ state: 'failed' });
    expect(existsSync(paths.lock)).toBe(false);
    clearFailure(paths);
    expect(readBuildState(paths)).toEqual({ state: 'absent' });
  });

  it("reads ninja's and make's progress lines", () => {
    expect(compileProgress('[12/79] Building CXX object tools/server/server.cpp.o')).toEqual({ step: 12, total: 79 });
    expect(compileProgress('[ 45%] Building CXX object tools/mtmd/clip.cpp.o')).toEqual({ step: 45, total: 100 });
    expect(compileProgress('-- Configuring done')).toBeUndefined();
  });
});
