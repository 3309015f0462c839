import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dataDirOf, registerAdminServer } from './admin-fetch.js';

export const HEARTH_BIN = fileURLToPath(new URL('../../bin/hearth.js', import.meta.url));
export const START_SCRIPT = fileURLToPath(new URL('../../scripts/start.js', import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment the tests start Hearth in: no HEARTH_* from the outside, quiet logs. The engine
 * settings stay: the test project chooses the engine (and where its build is), and a companion
 * on the default engine would start a llama-server build in the background.
 */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const kept = new Set(['HEARTH_ENGINE', 'HEARTH_ENGINE_CACHE']);
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('HEARTH_') || kept.has(name)) env[name] = value;
  return { ...env, HEARTH_LOG_LEVEL: 'warn', ...extra };
}

/** Runs `node <script> ...args` to completion (killed after timeoutMs) and collects its output. */
export function runNode(script: string, args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Finished> {
  const child = spawn(process.execPath, [script, ...args], { env: options.env ?? cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'], cwd: REPO_ROOT });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  return new Promise((resolve) => {
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** A started Hearth (or a process that starts one) with its output so far. */
export interface Watched {
  url: string;
  process: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once the process exited. */
  exited: Promise<Exit>;
}

export interface Listening extends Watched {
  port: number;
  stop(signal?: NodeJS.Signals): Promise<Exit>;
  /** Waits until stderr matches (polling), or fails after timeoutMs. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

/** Collects a spawned process's output and resolves once stdout shows "Hearth listening on URL"; rejects when it exits first. */
export async function untilListening(child: ChildProcess, name: string): Promise<Watched> {
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const match = /Hearth listening on (http:\/\/\S+)\n/.exec(out);
      if (match) resolve(match[1]!);
    });
    void exited.then(({ code, signal }) => reject(new Error(`${name} exited (${code ?? signal}) before listening:\nstdout: ${out}\nstderr: ${err}`)));
  });
  return { url, process: child, stdout: () => out, stderr: () => err, exited };
}

/**
 * Spawns `node <script> ...args` and resolves once stdout shows "Hearth listening on URL".
 * Unlike startServer(), adds no arguments of its own.
 */
export async function spawnListening(script: string, args: string[], env: NodeJS.ProcessEnv = cleanEnv()): Promise<Listening> {
  const child = spawn(process.execPath, [script, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: REPO_ROOT });
  const watched = await untilListening(child, script);
  const { url, exited } = watched;
  registerAdminServer(url, dataDirOf(args, env));
  return {
    ...watched,
    port: Number(new URL(url).port),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    async waitForStderr(pattern, timeoutMs = 20_000) {
      // Loaded here: the benchmarks use this file outside vitest.
      const { untilTrue } = await import('./until.js');
      await untilTrue(
        () => pattern.test(watched.stderr()),
        () => `stderr to match ${pattern}:\n${watched.stderr()}`,
        timeoutMs,
      );
      return watched.stderr();
    },
  };
}
