/**
 * Restarting `hearth serve` from the app (POST /admin/restart) in the terminal it was started in.
 *
 * The serving process stops exactly as it does at Ctrl+C (open streams end with a shutdown error,
 * runs and memory are written, models unloaded, the data folder released). The first process,
 * the one the terminal started, then stays as a small supervisor: it starts a fresh `hearth
 * serve` with the same arguments, the same data folder and the same port, sharing its terminal
 * (logs go on there) and its process group (Ctrl+C reaches both; the supervisor passes signals
 * on and exits with the server's code). A served child that is asked to restart exits with
 * RESTART_EXIT_CODE and the supervisor starts the next one. A fresh process, rather than the
 * services rebuilt inside the old one, is what puts every restart setting in force, the llama.cpp
 * binding (models.gpu) included, which a process loads once.
 */
import { spawn } from 'node:child_process';

/** The exit code of a served child that asks its supervisor for a fresh one. */
export const RESTART_EXIT_CODE = 75;

/** Set by the supervisor in its child's environment (with an IPC channel to it). */
const SUPERVISED = 'HEARTH_SUPERVISED';

/**
 * Whether this process was started by a restart supervisor; read once, and taken out of the
 * environment so that nothing this process starts inherits it.
 */
export function startedByRestart(env: NodeJS.ProcessEnv): boolean {
  const supervised = env[SUPERVISED] === '1' && typeof process.send === 'function';
  delete process.env[SUPERVISED];
  return supervised;
}

/** A supervised child stops (as at Ctrl+C) when its supervisor is gone, instead of serving on without a terminal owner. */
export function stopWithSupervisor(stop: () => void): void {
  process.once('disconnect', stop);
}

/**
 * The arguments the next `hearth serve` gets: the same as this one's, with the port this one was
 * given when it was chosen at start (`--port 0`), so the app finds it again at the same address,
 * and without opening another browser window (the open app reconnects).
 */
export function restartArguments(argv: string[], portOption: number | undefined, boundPort: number | undefined): string[] {
  const args = [...argv];
  if (portOption === 0 && boundPort) args.push('--port', String(boundPort));
  if (!args.includes('--no-browser')) args.push('--no-browser');
  return args;
}

/**
 * Runs fresh `hearth serve` processes with `args`, one after the other while each exits asking
 * for a restart, and answers the last one's exit code. SIGINT and SIGTERM are passed on to the
 * one running (a terminal's Ctrl+C reaches it directly too; it treats the copy as the same).
 */
export async function superviseRestarts(args: string[], stderr: NodeJS.WritableStream): Promise<number> {
  for (;;) {
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, 'serve', ...args], {
      stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, [SUPERVISED]: '1' },
    });
    const pass = (signal: NodeJS.Signals) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    };
    process.on('SIGINT', pass);
    process.on('SIGTERM', pass);
    const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once('error', (error) => {
        stderr.write(`Hearth could not be started again: ${error.message}\n`);
        resolve({ code: 1, signal: null });
      });
      child.once('exit', (exitCode, exitSignal) => resolve({ code: exitCode, signal: exitSignal }));
    });
    process.removeListener('SIGINT', pass);
    process.removeListener('SIGTERM', pass);
    if (code === RESTART_EXIT_CODE) continue;
    if (signal) return signal === 'SIGINT' ? 130 : 128 + 15;
    return code ?? 1;
  }
}
