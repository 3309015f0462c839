/** The programs a llama.cpp build needs, found on PATH; shared with the benchmarks' native peer build. */
import { execFile, spawn, spawnSync } from 'node:child_process';

export function has(command: string, env: NodeJS.ProcessEnv = process.env): boolean {
  try {
    return spawnSync(command, ['--version'], { stdio: 'ignore', env, timeout: 10_000 }).status === 0;
  } catch {
    return false;
  }
}

export interface Toolchain {
  cmake: string;
  /** `-G Ninja` when ninja is present, else CMake's default (make). */
  generator: string[];
  git: string;
}

/** The toolchain, or what is missing in words (with the Debian packages that bring it). */
export function findToolchain(env: NodeJS.ProcessEnv = process.env): Toolchain | { missing: string } {
  const missing: string[] = [];
  if (!has('cmake', env)) missing.push('CMake');
  if (!['c++', 'g++', 'clang++'].some((compiler) => has(compiler, env))) missing.push('a C++ compiler');
  if (!has('git', env)) missing.push('git (it unpacks the llama.cpp source that node-llama-cpp bundles)');
  if (missing.length > 0)
    return { missing: `${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not installed (Debian: apt-get install cmake ninja-build g++ git)` };
  return { cmake: 'cmake', generator: has('ninja', env) ? ['-G', 'Ninja'] : [], git: 'git' };
}

function hasAsync(command: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((resolve) => execFile(command, ['--version'], { env, timeout: 10_000 }, (error) => resolve(!error)));
}

/** What of the toolchain is missing, in words, without blocking the event loop (the companion asks this). */
export async function missingToolchainAsync(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  const [cmake, cxx, gxx, clang, git] = await Promise.all(['cmake', 'c++', 'g++', 'clang++', 'git'].map((command) => hasAsync(command, env)));
  const missing: string[] = [];
  if (!cmake) missing.push('CMake');
  if (!cxx && !gxx && !clang) missing.push('a C++ compiler');
  if (!git) missing.push('git (it unpacks the llama.cpp source that node-llama-cpp bundles)');
  return missing.length > 0 ? missingWords(missing) : undefined;
}

function missingWords(missing: string[]): string {
  return `${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not installed (Debian: apt-get install cmake ninja-build g++ git)`;
}

/**
 * The command line that runs a tool at a priority: `low` is nice 10; `idle` is nice 19 and, where
 * util-linux's ionice is there, the idle I/O class (it reads and writes only when nothing else does; ignored where it cannot be set).
 */
export function atPriority(command: string, args: string[], priority: 'low' | 'idle'): [string, string[]] {
  let line: [string, string[]] = [command, args];
  if (priority === 'idle' && has('ionice')) line = ['ionice', ['-c', '3', '-t', command, ...args]];
  if (has('nice')) line = ['nice', ['-n', priority === 'idle' ? '19' : '10', line[0], ...line[1]]];
  return line;
}

/** Runs a build tool at low priority (or idle); each output line goes to `onLine`. Rejects with the last lines when it fails. */
export function runTool(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; signal?: AbortSignal; onLine?: (line: string) => void; priority?: 'low' | 'idle' },
): Promise<void> {
  const [program, programArgs] = atPriority(command, args, options.priority ?? 'low');
  return new Promise((resolve, reject) => {
    const child = spawn(program, programArgs, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    let partial = '';
    const read = (piece: Buffer) => {
      const lines = (partial + piece.toString()).split(/\r?\n/);
      partial = lines.pop() ?? '';
      for (const line of lines) {
        tail.push(line);
        if (tail.length > 40) tail.shift();
        options.onLine?.(line);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    const abort = () => child.kill('SIGTERM');
    options.signal?.addEventListener('abort', abort, { once: true });
    child.once('error', reject);
    child.once('close', (code, signal) => {
      options.signal?.removeEventListener('abort', abort);
      if (code === 0) return resolve();
      const why = signal ? `was stopped (${signal})` : `failed with status ${code}`;
      reject(new Error(`${command} ${args.slice(0, 3).join(' ')} ${why}:\n${tail.slice(-15).join('\n')}`));
    });
  });
}
