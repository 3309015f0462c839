/**
 * The native build: the whole llama.cpp tree node-llama-cpp bundles, compiled on this machine for
 * this CPU (`GGML_NATIVE=ON`, OpenMP), every library linked into one binary. It makes 1.2-1.4× the
 * tokens of the quick build on node-llama-cpp's prebuilt libraries, but takes minutes, so it is
 * built after the quick build, in the background at idle priority. It is cached beside the quick
 * build, keyed by the llama.cpp version and this CPU's features: a cache copied to another CPU
 * finds no build of its own there instead of running one made for this CPU. A native build runs on
 * the CPU only; a model on a GPU keeps the quick build, which loads the GPU libraries.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { arch } from 'node:os';
import { join } from 'node:path';
import { SERVER_SWITCHES } from './build-recipe.js';
import { buildPlace, compile, compileLines, engineCacheDir, type BuildPlace, type BuildRecipe, type ServerBuildPaths } from './build.js';
import { findToolchain, runTool } from './toolchain.js';

/** Bumped when the native recipe changes, so a cached native build made by an older recipe is rebuilt. */
const NATIVE_RECIPE_VERSION = 1;

/** A native build whose process is gone without a word: the words kept as its failure. */
export const NATIVE_ENDED =
  'the native build stopped before it finished (its process ended: it was killed, or the machine stopped); the quick build stays in use. Try again to build it once more';

export interface NativeBuildPaths extends BuildPlace {
  /** The quick build it is made from (the same llama.cpp source) and falls back to. */
  quick: ServerBuildPaths;
  /** A command that builds instead of CMake (HEARTH_NATIVE_BUILD_COMMAND), given the binary's path to write. */
  command?: string;
}

/**
 * What sets this CPU apart for a native build: its model and its instruction-set flags
 * (/proc/cpuinfo's `flags` on x86, `Features` on ARM).
 */
export function cpuFeatures(cpuinfo = readCpuinfo()): string {
  const field = (name: string) => new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(cpuinfo)?.[1]?.trim() ?? '';
  const flags = (field('flags') || field('Features')).split(/\s+/).filter(Boolean).sort().join(' ');
  return `${arch()}|${field('model name') || field('CPU part')}|${flags}`;
}

function readCpuinfo(): string {
  try {
    return readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return '';
  }
}

/**
 * Where the native build of a quick build's llama.cpp lives: `llama-server-native-<tag>-<key>` in
 * the engine cache ($HEARTH_NATIVE_CACHE moves it, for tests), the key made of the recipe, the
 * source, this CPU and the build command.
 */
export function nativeBuildPaths(quick: ServerBuildPaths, env: NodeJS.ProcessEnv = process.env, cpu = cpuFeatures()): NativeBuildPaths {
  const command = env.HEARTH_NATIVE_BUILD_COMMAND || undefined;
  const key = createHash('sha256')
    .update([NATIVE_RECIPE_VERSION, quick.source.tag, statSync(quick.source.bundle).size, cpu, command ?? 'cmake'].join('\n'))
    .digest('hex')
    .slice(0, 12);
  const root = join(env.HEARTH_NATIVE_CACHE ?? engineCacheDir(env), `llama-server-native-${quick.source.tag}-${key}`);
  return { ...buildPlace(root), quick, ...(command ? { command } : {}) };
}

/** The configure arguments of the native build: the server and every library it needs, for this CPU, linked into one binary. */
export function nativeConfigureArguments(): string[] {
  return ['-DCMAKE_BUILD_TYPE=Release', ...SERVER_SWITCHES, '-DGGML_NATIVE=ON', '-DGGML_OPENMP=ON', '-DGGML_BACKEND_DL=OFF', '-DGGML_CCACHE=OFF'];
}

/**
 * A build tool's failure in plain words: the last line of its output that says what went wrong
 * (a compiler killed by the kernel is named as such), else how the tool ended.
 */
export function plainFailure(error: unknown): string {
  const [first = '', ...tail] = (error instanceof Error ? error.message : String(error)).split('\n');
  const said = tail
    .map((line) => line.trim())
    .filter((line) => /error|fatal|killed|not found|no such file/i.test(line))
    .at(-1);
  const ended = /failed with status \d+|was stopped \(\w+\)/.exec(first)?.[0];
  if (!said) return ended ? `the build ${ended}` : first;
  return /killed signal|signal 9|sigkill/i.test(said) ? `${said} (the compiler was killed, most often because the machine ran out of memory)` : said;
}

/** How the native build is made: CMake on the bundled tree at idle priority, or the command that stands in for it; a failure is said in plain words. */
export function nativeRecipe(paths: NativeBuildPaths): BuildRecipe {
  const recipe = nativeSteps(paths);
  return async (context) => {
    try {
      return await recipe(context);
    } catch (error) {
      if (context.signal?.aborted) throw error;
      throw new Error(plainFailure(error));
    }
  };
}

function nativeSteps(paths: NativeBuildPaths): BuildRecipe {
  return async (context) => {
    const { work, env, signal, report, onLine } = context;
    const about = { tag: paths.quick.source.tag, node_llama_cpp: paths.quick.source.version, cpu: cpuFeatures().split('|')[1] ?? '' };
    if (paths.command) {
      const binary = join(work, 'llama-server');
      const progress = compileLines(context);
      report(0.01, 'running the build command', true);
      await runTool('sh', ['-c', `${paths.command} "$0"`, binary], {
        cwd: work,
        env: { ...env, HEARTH_QUICK_BINARY: paths.quick.binary },
        signal,
        priority: 'idle',
        onLine: progress.onLine,
      });
      return { binary, steps: progress.steps(), about };
    }
    const toolchain = findToolchain(env);
    if ('missing' in toolchain) throw new Error(toolchain.missing);
    const source = join(work, 'llama.cpp');
    const build = join(work, 'build');
    report(0.01, 'unpacking the llama.cpp source', true);
    await runTool(toolchain.git, ['clone', '--quiet', paths.quick.source.bundle, source], { cwd: work, env, signal, onLine, priority: 'idle' });
    report(0.03, 'configuring', true);
    await runTool(toolchain.cmake, ['-S', source, '-B', build, ...toolchain.generator, ...nativeConfigureArguments()], {
      cwd: work,
      env,
      signal,
      onLine,
      priority: 'idle',
    });
    const steps = await compile(toolchain.cmake, build, context, 'idle');
    return { binary: join(build, 'bin', 'llama-server'), steps, about };
  };
}
