/**
 * Where the native llama-server build is kept and how its state reads: keyed by the llama.cpp
 * version and this CPU's features (a cache copied to another CPU finds no build of its own), and a
 * build whose process is gone reads as failed with the reason (it is not tried again at each start).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPlace, clearFailure, readBuildState, type ServerBuildPaths } from '../../../companion/src/inference/server/build.js';
import { cpuFeatures, nativeBuildPaths, plainFailure } from '../../../companion/src/inference/server/native.js';
import { tempFolder } from '../../helpers/temp.js';

const X86 =
  'processor\t: 0\nmodel name\t: AMD EPYC 9454\nflags\t\t: fpu sse2 avx2 avx512f\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 9454\nflags\t\t: fpu sse2 avx2 avx512f\n';
const OLDER = 'processor\t: 0\nmodel name\t: Intel Xeon E5-2680\nflags\t\t: fpu sse2 avx\n';
const ARM = 'processor\t: 0\nFeatures\t: fp asimd sve\nCPU part\t: 0xd40\n';

/** A quick build of llama.cpp `tag` whose bundle is a file of the test's own. */
function quick(tag: string): ServerBuildPaths {
  const folder = tempFolder('quick');
  const bundle = join(folder, 'gitRelease.bundle');
  writeFileSync(bundle, 'bundle');
  return {
    ...buildPlace(join(folder, 'llama-server')),
    source: { packageDir: folder, version: '3.0.0', bundle, tag },
    libraries: { dir: folder, llama: 'libllama.so', llamaCommon: 'libllama-common.so', ggml: 'libggml.so', ggmlBase: 'libggml-base.so' },
  };
}

describe('the native build', () => {
  it("reads a CPU's model and instruction-set flags (x86 and ARM)", () => {
    expect(cpuFeatures(X86)).toMatch(/\|AMD EPYC 9454\|avx2 avx512f fpu sse2$/);
    expect(cpuFeatures(ARM)).toMatch(/\|0xd40\|asimd fp sve$/);
    expect(cpuFeatures(X86)).not.toBe(cpuFeatures(OLDER));
  });

  it('is kept in the engine cache, one per llama.cpp version and CPU', () => {
    const cache = tempFolder('engine-cache');
    const env = { HEARTH_ENGINE_CACHE: cache };
    const source = quick('b6000');
    const here = nativeBuildPaths(source, env, cpuFeatures(X86));
    expect(here.root.startsWith(join(cache, 'llama-server-native-b6000-'))).toBe(true);
    expect(here.binary).toBe(join(here.root, 'bin', 'llama-server'));
    expect(nativeBuildPaths(source, env, cpuFeatures(X86)).root).toBe(here.root);
    expect(nativeBuildPaths(source, env, cpuFeatures(OLDER)).root).not.toBe(here.root);
    expect(nativeBuildPaths(quick('b6001'), env, cpuFeatures(X86)).root).not.toBe(here.root);
    // A stand-in build command is a build of its own, and HEARTH_NATIVE_CACHE moves the cache.
    const elsewhere = tempFolder('native-cache');
    const standIn = nativeBuildPaths(source, { ...env, HEARTH_NATIVE_BUILD_COMMAND: 'true', HEARTH_NATIVE_CACHE: elsewhere }, cpuFeatures(X86));
    expect(standIn.root.startsWith(elsewhere)).toBe(true);
    expect(standIn.command).toBe('true');
  });

  it('reads a build whose process is gone as failed with the reason given, until the failure is forgotten', () => {
    const place = buildPlace(tempFolder('native'));
    mkdirSync(place.root, { recursive: true });
    // A pid no process has (above the kernel's limit).
    writeFileSync(place.state, JSON.stringify({ state: 'building', pid: 2 ** 30, progress: 0.4, step: 'compiling', started_at: '2026-11-29T12:00:00.000Z' }));
    expect(readBuildState(place, {}, () => undefined, 'it stopped')).toEqual({ state: 'failed', reason: 'it stopped', failed_at: '2026-11-29T12:00:00.000Z' });
    // The quick build's reading: absent, to be built again.
    expect(readBuildState(place, {}, () => undefined)).toEqual({ state: 'absent' });
    clearFailure(place);
    expect(readBuildState(place, {}, () => undefined, 'it stopped')).toEqual({ state: 'absent' });
    // A live build is building.
    writeFileSync(
      place.state,
      JSON.stringify({ state: 'building', pid: process.pid, progress: 0.4, step: 'compiling', started_at: '2026-11-29T12:00:00.000Z' }),
    );
    expect(readBuildState(place, {}, () => undefined, 'it stopped')).toMatchObject({ state: 'building', progress: 0.4 });
    clearFailure(place);
    expect(readBuildState(place, {}, () => undefined, 'it stopped')).toMatchObject({ state: 'building' });
  });
});

describe("the native build's failure in words", () => {
  it('is the line of the output that says what went wrong, else how the tool ended', () => {
    const tool = (tail: string[], end = 'failed with status 1') => new Error([`cmake --build /w/build ${end}:`, ...tail].join('\n'));
    expect(
      plainFailure(tool(['[ 40%] Building CXX object src/llama.cpp.o', 'c++: fatal error: Killed signal terminated program cc1plus', 'ninja: build stopped'])),
    ).toBe('c++: fatal error: Killed signal terminated program cc1plus (the compiler was killed, most often because the machine ran out of memory)');
    expect(plainFailure(tool(['src/llama.cpp:12:10: fatal error: omp.h: No such file or directory']))).toBe(
      'src/llama.cpp:12:10: fatal error: omp.h: No such file or directory',
    );
    expect(plainFailure(tool(['[ 40%] Building CXX object src/llama.cpp.o'], 'was stopped (SIGKILL)'))).toBe('the build was stopped (SIGKILL)');
    expect(plainFailure(new Error('CMake is not installed (Debian: apt-get install cmake ninja-build g++ git)'))).toBe(
      'CMake is not installed (Debian: apt-get install cmake ninja-build g++ git)',
    );
  });
});
