/**
 * llama-server built from the llama.cpp source that node-llama-cpp itself bundles, so a benchmark
 * compares engine with engine: same source, same model file, same machine. The build is cached
 * outside the repository (~/.cache/hearth-bench, or $HEARTH_BENCH_CACHE) and takes about ten
 * minutes on two cores the first time.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';

export type BuildOutcome = { binary: string } | { skipped: string };

function has(command: string): boolean {
  return spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;
}

function run(command: string, args: string[], cwd: string): void {
  const result = spawnSync('nice', ['-n', '10', command, ...args], { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed with status ${result.status}`);
}

/** Finds or builds llama-server; says why not when it cannot. */
export function llamaServer(log: (line: string) => void): BuildOutcome {
  const packageDir = join(dirname(createRequire(import.meta.url).resolve('node-llama-cpp')), '..');
  const bundle = join(packageDir, 'llama', 'gitRelease.bundle');
  if (!existsSync(bundle)) return { skipped: `node-llama-cpp's llama.cpp source (${bundle}) is missing` };
  const info = JSON.parse(readFileSync(join(packageDir, 'llama', 'llama.cpp.info.json'), 'utf8')) as { tag: string };
  const key = createHash('sha256')
    .update(`${info.tag}:${statSync(bundle).size}`)
    .digest('hex')
    .slice(0, 12);
  const root = join(process.env.HEARTH_BENCH_CACHE ?? join(homedir(), '.cache', 'hearth-bench'), `llama.cpp-${info.tag}-${key}`);
  const binary = join(root, 'build', 'bin', 'llama-server');
  if (existsSync(binary)) return { binary };
  if (!has('cmake')) return { skipped: 'CMake is not installed (Debian: apt-get install cmake ninja-build g++)' };
  if (!has('git')) return { skipped: 'git is not installed, and it is needed to unpack the llama.cpp source bundle' };
  const generator = has('ninja') ? ['-G', 'Ninja'] : [];
  mkdirSync(dirname(root), { recursive: true });
  if (!existsSync(join(root, 'CMakeLists.txt'))) run('git', ['clone', '--quiet', bundle, root], dirname(root));
  log(`building llama-server from ${info.tag} in ${root} (about ten minutes on two cores, once)…`);
  run(
    'cmake',
    [
      '-S',
      '.',
      '-B',
      'build',
      ...generator,
      '-DCMAKE_BUILD_TYPE=Release',
      '-DLLAMA_CURL=OFF',
      '-DLLAMA_BUILD_UI=OFF',
      '-DGGML_NATIVE=ON',
      '-DLLAMA_BUILD_TESTS=OFF',
      '-DLLAMA_BUILD_EXAMPLES=OFF',
    ],
    root,
  );
  run('cmake', ['--build', 'build', '--target', 'llama-server', '--parallel'], root);
  return existsSync(binary) ? { binary } : { skipped: `the build finished but ${binary} is missing` };
}

export interface RunningServer {
  url: string;
  stop(): Promise<void>;
}

/** Starts a server process and waits until it answers GET /health. */
export async function startServer(command: string, args: string[], port: number, env: NodeJS.ProcessEnv = process.env): Promise<RunningServer> {
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  child.stderr!.on('data', (piece: Buffer) => {
    stderr = (stderr + piece.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command} exited: ${stderr}`);
    if (Date.now() > deadline) throw new Error(`${command} did not answer /health in time: ${stderr}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
