/**
 * One llama-server process: started on node-llama-cpp's prebuilt libraries (the CPU build, or the
 * GPU variant node-llama-cpp runs on), listening on a Unix socket in the data folder's 0700 engine
 * folder (no TCP port another local user could reach), with a random API key and a short read and
 * write timeout (a stalled request cannot hold its HTTP threads), and ended with the companion. It cannot outlive the companion: on Linux it is started
 * through `setpriv --pdeathsig KILL`, so the kernel ends it when the companion dies however it dies,
 * and each process leaves a pid file that the next companion on the same data folder sweeps.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../logger.js';
import type { ServerBuildPaths } from './build.js';
import { ServerClient } from './client.js';
import { prebuiltDir, prebuiltLibraries, type GpuVariant } from './prebuilt.js';
import { engineSocket, type EngineSocket } from './socket.js';

/** llama-server's read and write timeout (its default is an hour): Hearth sends each request whole and reads answers as they come. */
const IO_TIMEOUT_SECONDS = 30;

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
  /** Ends a start in progress (the model was unloaded while loading): the process is stopped and the start rejects with the signal's reason once it has ended. */
  signal?: AbortSignal;
  /** llama-server's read and write timeout (default 30 s): a connection that stalls that long mid-request is dropped. */
  ioTimeoutSeconds?: number;
}

export interface ServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** How it ended, in plain words for messages; its log lines go to the companion's log only. */
  reason: string;
  /** Ended by the companion because it stopped answering (not a crash of the model). */
  unresponsive: boolean;
  /** Ended by stop(): asked for (an unload, a switch of binary), not a crash. */
  stopped: boolean;
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
  private unresponsive = false;
  readonly exited: Promise<ServerExit>;
  /** Speaks to the process over its socket. */
  readonly client: ServerClient;

  private constructor(
    private readonly child: ChildProcess,
    apiKey: string,
    private readonly pidFile: string,
    readonly socket: EngineSocket,
    private readonly log: Logger,
  ) {
    this.client = new ServerClient(() => socket.path, apiKey);
    this.exited = new Promise((resolve) => {
      // 'close', not 'exit': the process's last lines (why it failed) may still be in its pipes at exit.
      child.once('close', (code, signal) => {
        rmSync(pidFile, { force: true });
        socket.remove();
        if (!this.stopping) log.error({ pid: child.pid, code, signal, lines: this.lastLines() }, 'llama-server ended; its last log lines');
        resolve({ code, signal, reason: this.reason(), unresponsive: this.unresponsive, stopped: this.stopping });
      });
    });
  }

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
    // Only the companion's user can enter the engine folder, so only it can reach the socket.
    mkdirSync(launch.runDir, { recursive: true, mode: 0o700 });
    chmodSync(launch.runDir, 0o700);
    const socket = engineSocket(launch.runDir, launch.log);
    const args = [
      ...launch.args,
      ['--host', socket.path, '--timeout', String(launch.ioTimeoutSeconds ?? IO_TIMEOUT_SECONDS)],
      ['--no-webui', '--metrics', '--slots', '--log-colors', 'off'],
    ].flat();
    const [command, commandArgs] = (await canSetPdeathsig())
      ? ['setpriv', ['--pdeathsig', 'KILL', '--', launch.paths.binary, ...args]]
      : [launch.paths.binary, args];
    const child = spawn(command as string, commandArgs as string[], { cwd, env: { ...env, LLAMA_API_KEY: apiKey }, stdio: ['ignore', 'pipe', 'pipe'] });
    const pidFile = join(launch.runDir, `llama-server-${child.pid ?? 'unknown'}.pid`);
    if (child.pid) writeFileSync(pidFile, launch.paths.binary, { mode: 0o600 });
    const server = new ServerProcess(child, apiKey, pidFile, socket, launch.log);
    return server.waitReady(launch);
  }

  private waitReady(launch: ServerLaunch): Promise<ServerProcess> {
    return new Promise<ServerProcess>((resolve, reject) => {
      const { signal } = launch;
      const settle = (error?: unknown) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (error === undefined) resolve(this);
        else reject(error instanceof Error ? error : new Error(String(error)));
      };
      const onAbort = () => void this.stop(1000);
      const timer = setTimeout(() => {
        void this.stop();
        settle(new Error(`llama-server did not start within ${Math.round((launch.readyTimeoutMs ?? 900_000) / 60_000)} minutes`));
      }, launch.readyTimeoutMs ?? 900_000);
      timer.unref();
      const onLine = (line: string) => {
        if (!line.includes('listening on unix://')) return;
        void this.waitHealthy().then(() => {
          launch.onLoadProgress?.(1);
          settle();
        }, settle);
      };
      this.readLines(onLine);
      void this.exited.then((exit) => settle(signal?.aborted ? signal.reason : new Error(`${exit.reason}; the companion's log has its last lines`)));
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private readLines(onLine: (line: string) => void): void {
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      const decoder = new TextDecoder();
      let partial = '';
      stream.on('data', (piece: Buffer) => {
        const parts = (partial + decoder.decode(piece, { stream: true })).split('\n');
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
        await this.client.json('GET', '/health', undefined, AbortSignal.timeout(5000));
        return;
      } catch {
        // Not answering yet.
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * How the process ended, in plain words. Its log lines can hold paths and text from the model
   * file, so they stay in the companion's log (see lastLines) and never reach a client.
   */
  reason(): string {
    if (this.unresponsive) return 'llama-server stopped answering and was ended';
    const ended = this.child.signalCode
      ? `ended by ${this.child.signalCode}`
      : this.child.exitCode !== null
        ? `exited with status ${this.child.exitCode}`
        : 'is running';
    return `llama-server ${ended}`;
  }

  /** The log lines that say what went wrong (its error lines, else its last lines), for the companion's log. */
  private lastLines(): string[] {
    const errors = this.lines.filter((line) => /error|failed|abort|exception|what\(\)|GGML_ASSERT/i.test(line)).slice(-4);
    return (errors.length > 0 ? errors : this.lines.slice(-3)).map((line) => line.replace(/^[\d.]+ [A-Z] /, '').trim());
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

  /** Ends the process at once, as a crash would (tests). */
  kill(): void {
    this.child.kill('SIGKILL');
  }

  /** Ends a process that stopped answering: its exit says so, and is not counted as a crash of the model. */
  endUnresponsive(): void {
    this.unresponsive = true;
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
    // Sockets of processes that ended with an earlier companion.
    if (/^llama-server-[0-9a-f]+\.sock$/.test(file)) rmSync(join(runDir, file), { force: true });
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
