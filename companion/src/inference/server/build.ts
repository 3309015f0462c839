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
import { dirname, join } from 'node:path';
import type { EngineBuildStatus } from '#shared/api/admin.js';
import { writeFileAtomic } from '../../store/files.js';
import { processAlive, releasePidFile, takePidFile } from '../../store/lock.js';
import { configureArguments, RECIPE_VERSION, WRAPPER_CMAKE } from './build-recipe.js';
import { llamaSource, prebuiltDir, prebuiltFingerprint, prebuiltLibraries, unsupportedPlatform, type LlamaSource, type PrebuiltLibraries } from './prebuilt.js';
import { findToolchain, runTool } from './toolchain.js';

/** Where one build lives: its binary, its state and info files, its lock, log and work folder. */
export interface BuildPlace {
  root: string;
  binary: string;
  state: string;
  info: string;
  lock: string;
  log: string;
  work: string;
}

export interface ServerBuildPaths extends BuildPlace {
  source: LlamaSource;
  /** The CPU libraries the binary is linked against (their file names are what it loads). */
  libraries: PrebuiltLibraries;
}

/** The files of a build in its folder. */
export function buildPlace(root: string): BuildPlace {
  return {
    root,
    binary: join(root, 'bin', 'llama-server'),
    state: join(root, 'state.json'),
    info: join(root, 'build.json'),
    lock: join(root, 'lock'),
    log: join(root, 'build.log'),
    work: join(root, 'work'),
  };
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
  return { ...buildPlace(join(engineCacheDir(env), `llama-server-${source.tag}-${key}`)), source, libraries };
}

interface BuildInfo {
  built_at: string;
  build_seconds: number;
  compile_steps: number;
  /** What it was built from (the llama.cpp tag, node-llama-cpp's version, the CPU). */
  [about: string]: string | number;
}

type StateFile =
  { state: 'building'; pid: number; progress: number; step: string; started_at: string } | { state: 'failed'; reason: string; failed_at: string };

/**
 * The build's state as the files show it; a build whose process is gone counts as absent, or as
 * failed with `ended` as its reason when one is given (the native build: it is not tried again at
 * each start). `missingTools` says what keeps an absent build from being made (it runs the tools,
 * so a long-lived caller passes a remembered answer).
 */
export function readBuildState(
  paths: BuildPlace | { unavailable: string },
  env: NodeJS.ProcessEnv = process.env,
  missingTools: () => string | undefined = () => missingToolchain(env),
  ended?: string,
): EngineBuildStatus {
  if ('unavailable' in paths) return { state: 'absent', reason: paths.unavailable };
  const info = readJson<BuildInfo>(paths.info);
  if (info && existsSync(paths.binary)) return { state: 'ready', built_at: info.built_at, build_seconds: info.build_seconds };
  const state = readJson<StateFile>(paths.state);
  if (state?.state === 'building' && processAlive(state.pid))
    return { state: 'building', progress: state.progress, step: state.step, started_at: state.started_at };
  if (state?.state === 'building' && ended) return { state: 'failed', reason: ended, failed_at: state.started_at };
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
  /** The build in words, for its failure (default: the llama-server build). */
  name?: string;
}

/** What a recipe is given: its work folder, and how it reports a step and each line of its tools' output. */
export interface RecipeContext {
  work: string;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** Progress 0..1 and the step in words; `force` writes the state file at once. */
  report: (progress: number, step: string, force?: boolean) => void;
  /** Appends a line to the build log. */
  onLine: (line: string) => void;
}

/** Makes the binary in the work folder; resolves with its path there, the compile steps it counted, and what it was built from. */
export type BuildRecipe = (context: RecipeContext) => Promise<{ binary: string; steps: number; about?: Record<string, string> }>;

/**
 * Builds llama-server unless it is built; waits for a build another process runs instead of
 * starting a second one. Resolves with the final state (ready or failed); never throws for a
 * failed build, whose reason is kept in the state file until the next attempt.
 */
export function buildServer(paths: ServerBuildPaths, options: BuildOptions = {}): Promise<EngineBuildStatus> {
  return buildWith(paths, quickRecipe(paths), options);
}

/** Builds at a place with a recipe, under the place's lock (see buildServer). */
export async function buildWith(place: BuildPlace, recipe: BuildRecipe, options: BuildOptions = {}): Promise<EngineBuildStatus> {
  const env = options.env ?? process.env;
  for (;;) {
    const current = readBuildState(place, env, () => undefined);
    if (current.state === 'ready') return current;
    if (current.state === 'building') {
      options.onProgress?.(current);
      await sleep(1000, options.signal);
      if (options.signal?.aborted) return readBuildState(place, env);
      continue;
    }
    if (takeLock(place)) break;
    await sleep(500, options.signal);
  }
  try {
    return await buildLocked(place, recipe, env, options);
  } finally {
    releasePidFile(place.lock);
  }
}

/** The quick build: the server alone, on node-llama-cpp's prebuilt libraries. */
function quickRecipe(paths: ServerBuildPaths): BuildRecipe {
  return async ({ work, env, signal, report, onLine }) => {
    const toolchain = findToolchain(env);
    if ('missing' in toolchain) throw new Error(toolchain.missing);
    const source = join(work, 'llama.cpp');
    const wrapper = join(work, 'wrapper');
    const build = join(work, 'build');
    report(0.01, 'unpacking the llama.cpp source', true);
    await runTool(toolchain.git, ['clone', '--quiet', paths.source.bundle, source], { cwd: work, env, signal, onLine });
    mkdirSync(wrapper);
    writeFileSync(join(wrapper, 'CMakeLists.txt'), WRAPPER_CMAKE);
    report(0.03, 'configuring', true);
    await runTool(toolchain.cmake, ['-S', wrapper, '-B', build, ...toolchain.generator, ...configureArguments(source, paths.libraries)], {
      cwd: work,
      env,
      signal,
      onLine,
    });
    const steps = await compile(toolchain.cmake, build, { work, env, signal, report, onLine });
    return { binary: join(build, 'bin', 'llama-server'), steps, about: { tag: paths.source.tag, node_llama_cpp: paths.source.version } };
  };
}

/** `cmake --build` of the llama-server target, its progress reported from 5 % to 100 %; returns the compile steps counted. */
export async function compile(cmake: string, build: string, context: RecipeContext, priority: 'low' | 'idle' = 'low'): Promise<number> {
  const progress = compileLines(context);
  await runTool(cmake, ['--build', build, '--target', 'llama-server', '--parallel', String(buildJobs())], {
    cwd: context.work,
    env: context.env,
    signal: context.signal,
    priority,
    onLine: progress.onLine,
  });
  return progress.steps();
}

/** Reads a build's output lines: each goes to the log, and its `[12/70]` or `[ 17%]` is reported as progress from 5 % to 100 %. */
export function compileLines({ report, onLine }: Pick<RecipeContext, 'report' | 'onLine'>): { onLine: (line: string) => void; steps: () => number } {
  let steps = 0;
  return {
    onLine: (line) => {
      onLine(line);
      const done = compileProgress(line);
      if (!done) return;
      steps = Math.max(steps, done.total);
      report(0.05 + 0.95 * (done.step / done.total), `compiling (${done.step} of ${done.total} steps)`, done.step === done.total);
    },
    steps: () => steps,
  };
}

async function buildLocked(paths: BuildPlace, recipe: BuildRecipe, env: NodeJS.ProcessEnv, options: BuildOptions): Promise<EngineBuildStatus> {
  const started = Date.now();
  const startedAt = new Date(started).toISOString();
  let lastWrite = 0;
  let latest: EngineBuildStatus | undefined;
  let trailing: NodeJS.Timeout | undefined;
  const write = () => {
    clearTimeout(trailing);
    trailing = undefined;
    lastWrite = Date.now();
    if (latest) writeFileAtomic(paths.state, JSON.stringify({ ...latest, pid: process.pid }), 0o644);
  };
  // At most two writes a second; the last progress of a burst is written once the half second is over.
  const report = (progress: number, step: string, force = false) => {
    latest = { state: 'building', progress, step, started_at: startedAt };
    options.onProgress?.(latest);
    const wait = 500 - (Date.now() - lastWrite);
    if (force || wait <= 0) write();
    else trailing ??= setTimeout(write, wait);
  };
  const log = openSync(paths.log, 'w');
  const onLine = (line: string) => void writeSync(log, `${line}\n`);
  try {
    rmSync(paths.work, { recursive: true, force: true });
    mkdirSync(paths.work, { recursive: true });
    const built = await recipe({ work: paths.work, env, signal: options.signal, report, onLine });
    clearTimeout(trailing);
    mkdirSync(dirname(paths.binary), { recursive: true });
    renameSync(built.binary, paths.binary);
    const info: BuildInfo = {
      built_at: new Date().toISOString(),
      build_seconds: Math.round((Date.now() - started) / 1000),
      ...built.about,
      compile_steps: built.steps,
    };
    writeFileAtomic(paths.info, JSON.stringify(info, null, 2), 0o644);
    rmSync(paths.state, { force: true });
    rmSync(paths.work, { recursive: true, force: true });
    return { state: 'ready', built_at: info.built_at, build_seconds: info.build_seconds };
  } catch (error) {
    clearTimeout(trailing);
    rmSync(paths.work, { recursive: true, force: true });
    if (options.signal?.aborted) {
      rmSync(paths.state, { force: true });
      return readBuildState(paths, env);
    }
    const failed: EngineBuildStatus = {
      state: 'failed',
      reason: `${options.name ?? 'the llama-server build'} failed: ${error instanceof Error ? error.message : String(error)} (full log: ${paths.log})`,
      failed_at: new Date().toISOString(),
    };
    writeFileAtomic(paths.state, JSON.stringify(failed), 0o644);
    return failed;
  } finally {
    clearTimeout(trailing);
    closeSync(log);
  }
}

/** Forgets a failed build (or one whose process is gone) so the next attempt starts afresh. */
export function clearFailure(paths: BuildPlace): void {
  const state = readJson<StateFile>(paths.state);
  if (state?.state === 'failed' || (state?.state === 'building' && !processAlive(state.pid))) rmSync(paths.state, { force: true });
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
function takeLock(paths: BuildPlace): boolean {
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
