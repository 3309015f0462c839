/**
 * Where node-llama-cpp keeps what the llama-server engine is built from and runs on: the llama.cpp
 * source it bundles (a git bundle of the exact version of its binaries) and its prebuilt libraries
 * (`libllama`, `libllama-common`, `libggml*` and the CPU-variant and GPU backend modules that ggml
 * loads at run time).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { dirname, join } from 'node:path';

/** The GPU library node-llama-cpp runs on (its `llama.gpu`), or false for the CPU build. */
export type GpuVariant = 'cuda' | 'vulkan' | 'metal' | false;

export interface LlamaSource {
  /** node-llama-cpp's package folder. */
  packageDir: string;
  version: string;
  /** `llama/gitRelease.bundle`: llama.cpp's source at the version of the prebuilt binaries. */
  bundle: string;
  /** The llama.cpp release tag the binaries were built from (`llama/llama.cpp.info.json`). */
  tag: string;
}

/** The prebuilt shared libraries the server links against, by the file names in their folder. */
export interface PrebuiltLibraries {
  dir: string;
  llama: string;
  llamaCommon: string;
  ggml: string;
  ggmlBase: string;
}

export function llamaSource(): LlamaSource {
  const packageDir = join(dirname(createRequire(import.meta.url).resolve('node-llama-cpp')), '..');
  const info = JSON.parse(readFileSync(join(packageDir, 'llama', 'llama.cpp.info.json'), 'utf8')) as { tag: string };
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
  return { packageDir, version, bundle: join(packageDir, 'llama', 'gitRelease.bundle'), tag: info.tag };
}

/** Why the llama-server engine cannot run on this machine at all, or undefined when it can. */
export function unsupportedPlatform(): string | undefined {
  if (platform() !== 'linux') return `the llama-server engine is built and run on Linux only (this is ${platform()})`;
  if (arch() !== 'x64' && arch() !== 'arm64') return `node-llama-cpp ships no prebuilt libraries for ${arch()} to build llama-server against`;
  return undefined;
}

/** The folder of node-llama-cpp's prebuilt binaries for a GPU variant, e.g. `@node-llama-cpp/linux-x64-cuda/bins/linux-x64-cuda`. */
export function prebuiltDir(gpu: GpuVariant, source: LlamaSource = llamaSource()): string | undefined {
  const name = `linux-${arch()}${gpu ? `-${gpu}` : ''}`;
  const require = createRequire(join(source.packageDir, 'package.json'));
  let packageDir: string;
  try {
    // The package exports only its entry (dist/index.js); its bins folder sits beside dist.
    packageDir = join(dirname(require.resolve(`@node-llama-cpp/${name}`)), '..');
  } catch {
    return undefined;
  }
  const dir = join(packageDir, 'bins', name);
  return existsSync(dir) ? dir : undefined;
}

/** Finds the four libraries in a prebuilt folder (their names carry the variant and the tag, e.g. `libllama.cuda.v0.4.0.so`). */
export function prebuiltLibraries(dir: string): PrebuiltLibraries | undefined {
  const files = readdirSync(dir);
  const find = (pattern: RegExp) => files.find((file) => pattern.test(file));
  const llama = find(/^libllama\.(?:[a-z]+\.)?v[^/]*\.so$/);
  const ggml = find(/^libggml\.(?:[a-z]+\.)?v[^/]*\.so$/);
  const llamaCommon = find(/^libllama-common\.so$/);
  const ggmlBase = find(/^libggml-base\.so$/);
  if (!llama || !ggml || !llamaCommon || !ggmlBase) return undefined;
  return { dir, llama, ggml, llamaCommon, ggmlBase };
}

/** A fingerprint of what a build links against: a new node-llama-cpp (or new binaries) means a new build. */
export function prebuiltFingerprint(source: LlamaSource, libraries: PrebuiltLibraries): string {
  const size = (file: string) => statSync(join(libraries.dir, file)).size;
  return [source.version, source.tag, statSync(source.bundle).size, size(libraries.llama), size(libraries.llamaCommon), size(libraries.ggml)].join(':');
}
