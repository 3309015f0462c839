/**
 * One llama-server process: started on node-llama-cpp's prebuilt libraries (the CPU build, or the
 * GPU variant node-llama-cpp runs on), bound to 127.0.0.1 on a port it picks itself, with a random
 * API key, and ended with the companion. It cannot outlive the companion: on Linux it is started
 * through `setpriv --pdeathsig KILL`, so the kernel ends it when the companion dies however it dies,
 * and each process leaves a pid file that the next companion on the same data folder sweeps.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../logger.js';
import type { ServerBuildPaths } from './build.js';
import { prebuiltDir, prebuiltLibraries, type GpuVariant } from './prebuilt.js';

export interface ServerLaunch {
  paths: ServerBuildPaths;
  gpu: GpuVariant;
  /** The model's flags (model file, context, slots, threads...); address and key are added here. */
  args: string[];
  /** Where pid files are kept for the sweep at the next start. */
  runDir: string;
  log: Logger;
  /** Load progress, 0..1 (llama-server reports only the end of its load). */
  onLoadProgress?: (fraction: number) => void;
  /** A model load can take minutes (a large file on a slow disk); default 15 minutes. */
  readyTimeoutMs?: number;
}

export interface ServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The process's last log lines that say what went wrong, for messages. */
  reason: string;
}

let setprivAvailable: Promise<boolean> | undefined;

/** Whether util-linux's setpriv is there to set the parent-death signal (found out once, without blocking). */
function canSetPdeathsig(): Promise<boolean> {
  setprivAvailable ??= new Promise((resolve) => execFile('setpriv', ['--version'], { timeout: 10_000 }, (error) => resolve(!error)));
  return setprivAvailable;
}

export class ServerProcess {
  private readonly lines: string[] = [];
  private stopping = false;
  readonly exited: Promise<ServerExit>;

  private constructor(
    private readonly child: ChildProcess,
    readonly apiKey: string,
    private readonly pidFile: string,
  ) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        rmSync(pidFile, { force: true });
        resolve({ code, signal, reason: this.reason() });
      });
    });
  }

  port = 0;

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** Whether the process ended without being asked to. */
  get crashed(): boolean {
    return !this.stopping && (this.child.exitCode !== null || this.child.signalCode !== null);
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the process and resolves once it answers /health; rejects with its own words when it ends first. */
  static async start(launch: ServerLaunch): Promise<ServerProcess> {
    const { env, cwd } = runtime(launch.paths, launch.gpu);
    const apiKey = randomBytes(24).toString('base64url');
    const args = [...launch.args, '--host', '127.0.0.1', '--port', '0', '--no-webui', '--metrics', '--slots', '--log-colors', 'off'];
    const [command, commandArgs] = (await canSetPdeathsig())
      ? ['setpriv', ['--pdeathsig', 'KILL', '--', launch.paths.binary, ...args]]
      : [launch.paths.binary, args];
    mkdirSync(launch.runDir, { recursive: true });
    const child = spawn(command as string, commandArgs as string[], { cwd, env: { ...env, LLAMA_API_KEY: apiKey }, stdio: ['ignore', 'pipe', 'pipe'] });
    const pidFile = join(launch.runDir, `llama-server-${child.pid ?? 'unknown'}.pid`);
    if (child.pid) writeFileSync(pidFile, launch.paths.binary, { mode: 0o600 });
    const server = new ServerProcess(child, apiKey, pidFile);
    return server.waitReady(launch);
  }

  private waitReady(launch: ServerLaunch): Promise<ServerProcess> {
    return new Promise<ServerProcess>((resolve, reject) => {
      const timer = setTimeout(() => {
        void this.stop();
        reject(new Error(`llama-server did not start within ${Math.round((launch.readyTimeoutMs ?? 900_000) / 60_000)} minutes: ${this.reason()}`));
      }, launch.readyTimeoutMs ?? 900_000);
      timer.unref();
      const onLine = (line: string) => {
        const listening = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(line);
        if (!listening) return;
        this.port = Number(listening[1]);
        void this.waitHealthy().then(
          () => {
            clearTimeout(timer);
            launch.onLoadProgress?.(1);
            resolve(this);
          },
          (error: unknown) => {
            clearTimeout(timer);
            reject(error instanceof Error ? error : new Error(String(error)));
          },
        );
      };
      this.readLines(onLine);
      void this.exited.then((exit) => {
        clearTimeout(timer);
        reject(new Error(exit.reason));
      });
    });
  }

  private readLines(onLine: (line: string) => void): void {
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      let partial = '';
      stream.on('data', (piece: Buffer) => {
        const parts = (partial + piece.toString()).split('\n');
        partial = parts.pop() ?? '';
        for (const line of parts) {
          this.lines.push(line);
          if (this.lines.length > 60) this.lines.shift();
          onLine(line);
        }
      });
    }
  }

  private async waitHealthy(): Promise<void> {
    for (;;) {
      if (!this.running) throw new Error(this.reason());
      try {
        const response = await fetch(`http://127.0.0.1:${this.port}/health`);
        if (response.ok) return;
      } catch {
        // Not answering yet.
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** What the log says went wrong: its error lines, else its last lines. */
  reason(): string {
    const errors = this.lines.filter((line) => /error|failed|abort|exception|what\(\)|GGML_ASSERT/i.test(line)).slice(-4);
    const picked = (errors.length > 0 ? errors : this.lines.slice(-3)).map((line) => line.replace(/^[\d.]+ [A-Z] /, '').trim());
    const ended = this.child.signalCode
      ? `ended by ${this.child.signalCode}`
      : this.child.exitCode !== null
        ? `exited with status ${this.child.exitCode}`
        : 'is running';
    return `llama-server ${ended}${picked.length > 0 ? `: ${picked.join(' / ')}` : ''}`;
  }

  /** SIGTERM, then SIGKILL if it has not ended after `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    this.stopping = true;
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Ends the process at once, as a crash would (tests, and a process that stopped answering). */
  kill(): void {
    this.child.kill('SIGKILL');
  }
}

/** The environment and working folder that make the binary load the prebuilt libraries of a variant. */
function runtime(paths: ServerBuildPaths, gpu: GpuVariant): { env: NodeJS.ProcessEnv; cwd: string } {
  const env: NodeJS.ProcessEnv = {};
  // The user's llama.cpp settings (LLAMA_ARG_HOST...) must not change what Hearth asks for.
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('LLAMA_')) env[name] = value;
  let dirs = [paths.libraries.dir];
  let cwd = paths.libraries.dir;
  const variantDir = gpu ? prebuiltDir(gpu, paths.source) : undefined;
  const variant = variantDir ? prebuiltLibraries(variantDir) : undefined;
  if (variant) {
    // The binary asks for the CPU build's file names; the variant's libraries answer under them.
    const links = join(paths.root, `lib-${gpu}`);
    mkdirSync(links, { recursive: true });
    for (const [name, target] of [
      [paths.libraries.llama, variant.llama],
      [paths.libraries.ggml, variant.ggml],
    ] as const) {
      const link = join(links, name);
      if (!existsSync(link)) symlinkSync(join(variant.dir, target), link);
    }
    dirs = [links, variant.dir];
    cwd = variant.dir;
    if (gpu === 'cuda') env.CUDA_CACHE_MAXSIZE ??= String(4 * 2 ** 30);
  }
  env.LD_LIBRARY_PATH = [...dirs, env.LD_LIBRARY_PATH].filter(Boolean).join(':');
  return { env, cwd };
}

/** Ends llama-server processes a companion on this data folder left behind (one that was killed). */
export function sweepOrphans(runDir: string, log: Logger): void {
  if (!existsSync(runDir)) return;
  for (const file of readdirSync(runDir)) {
    const match = /^llama-server-(\d+)\.pid$/.exec(file);
    if (!match) continue;
    const pid = Number(match[1]);
    const binary = readFileSync(join(runDir, file), 'utf8');
    try {
      if (readlinkSync(`/proc/${pid}/exe`) === binary) {
        process.kill(pid, 'SIGKILL');
        log.warn({ pid }, 'ended a llama-server process left by an earlier companion');
      }
    } catch {
      // Gone already.
    }
    rmSync(join(runDir, file), { force: true });
  }
}
