/**
 * llama-server for the benchmarks, from the llama.cpp source that node-llama-cpp itself bundles, so a
 * benchmark compares engine with engine: same source, same model file, same machine. Two builds:
 * - the peer: a full native build (`-DGGML_NATIVE=ON`, every library compiled here), the yardstick
 *   the engine goals are set against. Cached outside the repository (~/.cache/hearth-bench, or
 *   $HEARTH_BENCH_CACHE); about ten minutes on two cores the first time.
 * - Hearth's own engine build (server only, on node-llama-cpp's prebuilt libraries), run stand-alone.
 * Both use the engine's build helpers (companion/src/inference/server/).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildServer, serverBuildPaths, type ServerBuildPaths } from '../companion/src/inference/server/build.js';
import { ServerBuild } from '../companion/src/inference/server/build-service.js';
import { NativeBuild } from '../companion/src/inference/server/native-service.js';
import { llamaSource } from '../companion/src/inference/server/prebuilt.js';
import { findToolchain, runTool } from '../companion/src/inference/server/toolchain.js';
import { writeFileAtomic } from '../companion/src/store/files.js';

export type BuildOutcome = { binary: string } | { skipped: string };

/** Finds or builds the native peer; says why not when it cannot. */
export async function llamaServer(log: (line: string) => void): Promise<BuildOutcome> {
  const source = llamaSource();
  if (!existsSync(source.bundle)) return { skipped: `node-llama-cpp's llama.cpp source (${source.bundle}) is missing` };
  const key = createHash('sha256')
    .update(`${source.tag}:${statSync(source.bundle).size}`)
    .digest('hex')
    .slice(0, 12);
  const root = join(process.env.HEARTH_BENCH_CACHE ?? join(homedir(), '.cache', 'hearth-bench'), `llama.cpp-${source.tag}-${key}`);
  const binary = join(root, 'build', 'bin', 'llama-server');
  if (existsSync(binary)) return { binary };
  const toolchain = findToolchain();
  if ('missing' in toolchain) return { skipped: toolchain.missing };
  mkdirSync(dirname(root), { recursive: true });
  if (!existsSync(join(root, 'CMakeLists.txt'))) await runTool(toolchain.git, ['clone', '--quiet', source.bundle, root], { cwd: dirname(root) });
  log(`building the native llama-server peer from ${source.tag} in ${root} (about ten minutes on two cores, once)…`);
  const flags = [
    '-DCMAKE_BUILD_TYPE=Release',
    '-DLLAMA_CURL=OFF',
    '-DLLAMA_BUILD_UI=OFF',
    '-DLLAMA_USE_PREBUILT_UI=OFF',
    '-DGGML_NATIVE=ON',
    '-DLLAMA_BUILD_TESTS=OFF',
    '-DLLAMA_BUILD_EXAMPLES=OFF',
  ];
  await runTool(toolchain.cmake, ['-S', '.', '-B', 'build', ...toolchain.generator, ...flags], { cwd: root });
  await runTool(toolchain.cmake, ['--build', 'build', '--target', 'llama-server', '--parallel'], { cwd: root });
  return existsSync(binary) ? { binary } : { skipped: `the build finished but ${binary} is missing` };
}

/** Hearth's engine build (building it if needed), to run stand-alone beside Hearth. */
export async function engineServer(log: (line: string) => void): Promise<{ paths: ServerBuildPaths } | { skipped: string }> {
  const paths = serverBuildPaths();
  if ('unavailable' in paths) return { skipped: paths.unavailable };
  const status = await buildServer(paths, { onProgress: (progress) => progress.state === 'building' && log(`  engine build: ${progress.step}`) });
  return status.state === 'ready' ? { paths } : { skipped: status.state === 'failed' ? status.reason : `the engine build is ${status.state}` };
}

export interface RunningServer {
  url: string;
  stop(): Promise<void>;
}

/** Starts a server process and waits until it answers GET /health. */
export async function startServer(command: string, args: string[], port: number, env: NodeJS.ProcessEnv = process.env, cwd?: string): Promise<RunningServer> {
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env, cwd });
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

const HEARTH = fileURLToPath(new URL('../bin/hearth.js', import.meta.url));

/**
 * `hearth serve` as its own process on `dataDir`, on one engine, at a random port on 127.0.0.1: a
 * config.yaml serving the models in `modelsDir` with `parallel` sequences of `context` tokens each,
 * default settings otherwise, warnings only in its log. On the quick llama-server build unless
 * `native` (then the native build when it is built already: as a user's Hearth runs once its
 * background build is done); no native build starts during a measurement. Resolves once it
 * answers GET /health.
 */
export function startHearthProcess(
  dataDir: string,
  options: { modelsDir: string; parallel: number; context: number; engine: 'server' | 'in-process'; native?: boolean },
): Promise<RunningServer> {
  const native = options.native && new NativeBuild(new ServerBuild()).binary() !== undefined;
  writeFileAtomic(
    join(dataDir, 'config.yaml'),
    `version: 1\nmodels:\n  dirs: [${JSON.stringify(options.modelsDir)}]\n  parallel: ${options.parallel}\n  context_size: ${options.context}\n  external_sources: false\n  native_build: ${native ? 'auto' : 'off'}\n`,
  );
  const port = 18000 + Math.floor(Math.random() * 1000);
  return startServer(process.execPath, [HEARTH, 'serve', '--host', '127.0.0.1', '--port', String(port), '--data-dir', dataDir, '--no-external-models'], port, {
    ...process.env,
    HEARTH_LOG_LEVEL: 'warn',
    HEARTH_ENGINE: options.engine,
  });
}

/** The executable of the llama-server process Hearth runs `model` on (the quick or the native build), once the model is loaded. */
export async function hearthServerBinary(url: string, folder: string, model = 'small'): Promise<string> {
  const headers = { authorization: `Bearer ${readFileSync(join(folder, 'admin-token'), 'utf8').trim()}` };
  const status = (await (await fetch(`${url}/admin/status`, { headers })).json()) as { loaded: { id: string; process?: { pid: number } }[] };
  const pid = status.loaded.find((entry) => entry.id === model)?.process?.pid;
  if (!pid) throw new Error(`Hearth runs no llama-server for the ${model} model.`);
  return readlinkSync(`/proc/${pid}/exe`);
}

/** Loads the model on Hearth's llama-server engine and reads the command line of its process. */
export async function hearthServerArgs(url: string, folder: string, model = 'small'): Promise<string[]> {
  const headers = { authorization: `Bearer ${readFileSync(join(folder, 'admin-token'), 'utf8').trim()}` };
  await fetch(`${url}/admin/models/${model}/load`, { method: 'POST', headers });
  const status = (await (await fetch(`${url}/admin/status`, { headers })).json()) as { loaded: { id: string; process?: { pid: number } }[] };
  const pid = status.loaded.find((entry) => entry.id === model)?.process?.pid;
  if (!pid) throw new Error(`Hearth did not start llama-server for the ${model} model.`);
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).slice(1);
}

/** The engine's flags made to listen on 127.0.0.1:`port` instead of its Unix socket (a stand-alone peer needs a TCP port). */
export function onTcpPort(args: string[], port: number): void {
  for (const flag of ['--host', '--port']) {
    const at = args.indexOf(flag);
    if (at >= 0) args.splice(at, 2);
  }
  args.push('--host', '127.0.0.1', '--port', String(port));
}
