/**
 * The llama-server build: where it lives, what state it is in, and the build itself. The build is a
 * cache outside the repository and the data folder (`~/.cache/hearth/llama-server-<tag>-<hash>`, or
 * under $HEARTH_ENGINE_CACHE), one per node-llama-cpp version: several companions and the install
 * step share it, and a lock file lets only one of them build at a time. Its state is kept in files,
 * so a companion reads the progress of a build another process runs.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { availableParallelism, homedir } from 'node:os';
import { join } from 'node:path';
import type { EngineBuildStatus } from '#shared/api/admin.js';
import { writeFileAtomic } from '../../store/files.js';
import { processAlive, releasePidFile, takePidFile } from '../../store/lock.js';
import { configureArguments, RECIPE_VERSION, WRAPPER_CMAKE } from './build-recipe.js';
import { llamaSource, prebuiltDir, prebuiltFingerprint, prebuiltLibraries, unsupportedPlatform, type LlamaSource, type PrebuiltLibraries } from './prebuilt.js';
import { findToolchain, runTool } from './toolchain.js';

export interface ServerBuildPaths {
  root: string;
  binary: string;
  source: LlamaSource;
  /** The CPU libraries the binary is linked against (their file names are what it loads). */
  libraries: PrebuiltLibraries;
  state: string;
  info: string;
  lock: string;
  log: string;
  work: string;
}

/** Where builds are cached: $HEARTH_ENGINE_CACHE, else ~/.cache/hearth ($XDG_CACHE_HOME/hearth). */
export function engineCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.HEARTH_ENGINE_CACHE ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'hearth');
}

/** The paths of this node-llama-cpp's build, or why there can be none on this machine. */
export function serverBuildPaths(env: NodeJS.ProcessEnv = process.env): ServerBuildPaths | { unavailable: string } {
  const platform = unsupportedPlatform();
  if (platform) return { unavailable: platform };
  let source: LlamaSource;
  try {
    source = llamaSource();
  } catch (error) {
    return { unavailable: `node-llama-cpp's llama.cpp version cannot be read (${error instanceof Error ? error.message : String(error)})` };
  }
  if (!existsSync(source.bundle)) return { unavailable: `node-llama-cpp's llama.cpp source (${source.bundle}) is missing` };
  const dir = prebuiltDir(false, source);
  const libraries = dir ? prebuiltLibraries(dir) : undefined;
  if (!libraries) return { unavailable: "node-llama-cpp's prebuilt libraries for this machine are missing" };
  const key = createHash('sha256')
    .update(`${RECIPE_VERSION}:${prebuiltFingerprint(source, libraries)}`)
    .digest('hex')
    .slice(0, 12);
  const root = join(engineCacheDir(env), `llama-server-${source.tag}-${key}`);
  return {
    root,
    binary: join(root, 'bin', 'llama-server'),
    source,
    libraries,
    state: join(root, 'state.json'),
    info: join(root, 'build.json'),
    lock: join(root, 'lock'),
    log: join(root, 'build.log'),
    work: join(root, 'work'),
  };
}

interface BuildInfo {
  built_at: string;
  build_seconds: number;
  tag: string;
  node_llama_cpp: string;
  compile_steps: number;
}

type StateFile =
  { state: 'building'; pid: number; progress: number; step: string; started_at: string } | { state: 'failed'; reason: string; failed_at: string };

/**
 * The build's state as the files show it; a build whose process is gone counts as absent.
 * `missingTools` says what keeps an absent build from being made (it runs the tools, so a
 * long-lived caller passes a remembered answer).
 */
export function readBuildState(
  paths: ServerBuildPaths | { unavailable: string },
  env: NodeJS.ProcessEnv = process.env,
  missingTools: () => string | undefined = () => missingToolchain(env),
): EngineBuildStatus {
  if ('unavailable' in paths) return { state: 'absent', reason: paths.unavailable };
  const info = readJson<BuildInfo>(paths.info);
  if (info && existsSync(paths.binary)) return { state: 'ready', built_at: info.built_at, build_seconds: info.build_seconds };
  const state = readJson<StateFile>(paths.state);
  if (state?.state === 'building' && processAlive(state.pid))
    return { state: 'building', progress: state.progress, step: state.step, started_at: state.started_at };
  if (state?.state === 'failed') return { state: 'failed', reason: state.reason, failed_at: state.failed_at };
  const missing = missingTools();
  return missing ? { state: 'absent', reason: missing } : { state: 'absent' };
}

/** What of the build tools is missing, in words, or undefined. */
export function missingToolchain(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const toolchain = findToolchain(env);
  return 'missing' in toolchain ? toolchain.missing : undefined;
}

export interface BuildOptions {
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
  onProgress?: (status: EngineBuildStatus) => void;
}

/**
 * Builds llama-server unless it is built; waits for a build another process runs instead of
 * starting a second one. Resolves with the final state (ready or failed); never throws for a
 * failed build, whose reason is kept in the state file until the next attempt.
 */
export async function buildServer(paths: ServerBuildPaths, options: BuildOptions = {}): Promise<EngineBuildStatus> {
  const env = options.env ?? process.env;
  for (;;) {
    const current = readBuildState(paths, env);
    if (current.state === 'ready') return current;
    if (current.state === 'building') {
      options.onProgress?.(current);
      await sleep(1000, options.signal);
      if (options.signal?.aborted) return readBuildState(paths, env);
      continue;
    }
    if (takeLock(paths)) break;
    await sleep(500, options.signal);
  }
  try {
    return await buildLocked(paths, env, options);
  } finally {
    releasePidFile(paths.lock);
  }
}

async function buildLocked(paths: ServerBuildPaths, env: NodeJS.ProcessEnv, options: BuildOptions): Promise<EngineBuildStatus> {
  const started = Date.now();
  const startedAt = new Date(started).toISOString();
  let lastWrite = 0;
  const report = (progress: number, step: string, force = false) => {
    const status: EngineBuildStatus = { state: 'building', progress, step, started_at: startedAt };
    options.onProgress?.(status);
    if (!force && Date.now() - lastWrite < 500) return;
    lastWrite = Date.now();
    writeFileAtomic(paths.state, JSON.stringify({ ...status, pid: process.pid }), 0o644);
  };
  const log = openSync(paths.log, 'w');
  const onLine = (line: string) => void writeSync(log, `${line}\n`);
  try {
    const toolchain = findToolchain(env);
    if ('missing' in toolchain) throw new Error(toolchain.missing);
    rmSync(paths.work, { recursive: true, force: true });
    mkdirSync(paths.work, { recursive: true });
    const source = join(paths.work, 'llama.cpp');
    const wrapper = join(paths.work, 'wrapper');
    const build = join(paths.work, 'build');
    report(0.01, 'unpacking the llama.cpp source', true);
    await runTool(toolchain.git, ['clone', '--quiet', paths.source.bundle, source], { cwd: paths.work, env, signal: options.signal, onLine });
    mkdirSync(wrapper);
    writeFileSync(join(wrapper, 'CMakeLists.txt'), WRAPPER_CMAKE);
    report(0.03, 'configuring', true);
    await runTool(toolchain.cmake, ['-S', wrapper, '-B', build, ...toolchain.generator, ...configureArguments(source, paths.libraries)], {
      cwd: paths.work,
      env,
      signal: options.signal,
      onLine,
    });
    let steps = 0;
    await runTool(toolchain.cmake, ['--build', build, '--target', 'llama-server', '--parallel', String(buildJobs())], {
      cwd: paths.work,
      env,
      signal: options.signal,
      onLine: (line) => {
        onLine(line);
        const done = compileProgress(line);
        if (!done) return;
        steps = Math.max(steps, done.total);
        report(0.05 + 0.95 * (done.step / done.total), `compiling (${done.step} of ${done.total} steps)`, done.step === done.total);
      },
    });
    mkdirSync(join(paths.root, 'bin'), { recursive: true });
    renameSync(join(build, 'bin', 'llama-server'), paths.binary);
    const info: BuildInfo = {
      built_at: new Date().toISOString(),
      build_seconds: Math.round((Date.now() - started) / 1000),
      tag: paths.source.tag,
      node_llama_cpp: paths.source.version,
      compile_steps: steps,
    };
    writeFileAtomic(paths.info, JSON.stringify(info, null, 2), 0o644);
    rmSync(paths.state, { force: true });
    rmSync(paths.work, { recursive: true, force: true });
    return { state: 'ready', built_at: info.built_at, build_seconds: info.build_seconds };
  } catch (error) {
    rmSync(paths.work, { recursive: true, force: true });
    if (options.signal?.aborted) {
      rmSync(paths.state, { force: true });
      return readBuildState(paths, env);
    }
    const failed: EngineBuildStatus = {
      state: 'failed',
      reason: `the llama-server build failed: ${error instanceof Error ? error.message : String(error)} (full log: ${paths.log})`,
      failed_at: new Date().toISOString(),
    };
    writeFileAtomic(paths.state, JSON.stringify(failed), 0o644);
    return failed;
  } finally {
    closeSync(log);
  }
}

/** Forgets a failed build so the next attempt starts afresh. */
export function clearFailure(paths: ServerBuildPaths): void {
  if (readJson<StateFile>(paths.state)?.state === 'failed') rmSync(paths.state, { force: true });
}

/** Ninja's `[12/70]` and make's `[ 17%]` progress. */
export function compileProgress(line: string): { step: number; total: number } | undefined {
  const ninja = /^\[(\d+)\/(\d+)\]/.exec(line);
  if (ninja) return { step: Number(ninja[1]), total: Number(ninja[2]) };
  const make = /^\[\s*(\d+)%\]/.exec(line);
  if (make) return { step: Number(make[1]), total: 100 };
  return undefined;
}

function buildJobs(): number {
  return Math.max(1, Math.min(16, availableParallelism()));
}

/** The build lock, or false while another live process builds (a killed build's lock is taken over). */
function takeLock(paths: ServerBuildPaths): boolean {
  mkdirSync(paths.root, { recursive: true });
  return takePidFile(paths.lock, 0o644) === undefined;
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
