import { spawn } from 'node:child_process';
import { endMarked, killGroup, MARKER_VARIABLE, newMarker, type ProcessLedger } from './containment.js';
import { failure, success } from '../result.js';
import { stringArgument, ToolError, toolInput, type BuiltinResult } from './tool.js';
import { displayPath, resolveInWorkspace, workspaceTool } from './workspace.js';

/** Output kept from one command; the run loop cuts what the model sees further. */
const OUTPUT_LIMIT = 1024 * 1024;
/** After the shell exits, how long its output may take to drain before the pipes are closed. */
const DRAIN_MS = 1000;

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  dropped: number;
  why: 'exited' | 'timeout' | 'cancelled';
}

/**
 * Runs `/bin/sh -c command` in its own process group, with a minimal environment (not
 * Hearth's: no secrets) marked with the call's own marker, stdin closed, and output (stdout and
 * stderr together) kept up to a limit. On timeout, cancellation or the shell's exit, the whole
 * group is killed and then every process still carrying the marker (one that left the group
 * with `setsid` or by daemonising), so no command outlives its call. The marker is in the
 * ledger while the call runs: a start after a crash ends what it left.
 */
export async function runCommand(command: string, cwd: string, timeoutSeconds: number, signal: AbortSignal, ledger?: ProcessLedger): Promise<Finished> {
  // The environment MCP's stdio processes get (HOME, PATH, ...); the SDK is loaded on first use.
  const { getDefaultEnvironment } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  // A run cancelled already starts nothing (a kill right after spawning could come before the child has its own group).
  if (signal.aborted) return { code: null, signal: null, output: '', dropped: 0, why: 'cancelled' };
  const marker = newMarker();
  ledger?.started(marker);
  return new Promise<Finished>((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], {
      cwd,
      env: { ...getDefaultEnvironment(), LANG: process.env.LANG ?? 'C.UTF-8', [MARKER_VARIABLE]: marker },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      windowsHide: true,
    });
    const chunks: Buffer[] = [];
    let kept = 0;
    let dropped = 0;
    let why: Finished['why'] = 'exited';
    const keep = (chunk: Buffer) => {
      const room = OUTPUT_LIMIT - kept;
      if (room > 0) chunks.push(chunk.subarray(0, room));
      kept += Math.min(room, chunk.length);
      dropped += Math.max(0, chunk.length - room);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    /** The group at once, then the marked stragglers (their pipes may be what keeps the call open). */
    const contain = () => {
      killGroup(child.pid);
      void endMarked([marker]);
    };
    const stop = (reason: Finished['why']) => {
      why = reason;
      child.kill('SIGKILL');
      contain();
    };
    const timer = setTimeout(() => stop('timeout'), timeoutSeconds * 1000);
    const onAbort = () => stop('cancelled');
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    child.once('error', (error) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.once('exit', (code, exitSignal) => {
      exit = { code, signal: exitSignal };
      contain();
      // Pipes still held open by something that escaped the group must not hold the call.
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, DRAIN_MS).unref();
    });
    child.once('close', () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      const finished = { ...(exit ?? { code: null, signal: null }), output: Buffer.concat(chunks).toString('utf8'), dropped, why };
      // A last sweep before the call answers: nothing it started is left running.
      killGroup(child.pid);
      void endMarked([marker]).then(
        () => resolve(finished),
        () => resolve(finished),
      );
    });
  }).finally(() => ledger?.ended(marker));
}

function describe(finished: Finished, timeoutSeconds: number): BuiltinResult {
  const cut = finished.dropped > 0 ? `\n[${finished.dropped} more bytes of output were dropped]` : '';
  const output = finished.output + cut;
  if (finished.why === 'timeout')
    return failure(`The command did not finish within ${timeoutSeconds} s; it and everything it started were killed.\n${output}`.trimEnd());
  if (finished.why === 'cancelled') return failure(`The run was cancelled; the command and everything it started were killed.\n${output}`.trimEnd());
  const status = finished.code !== null ? `exit code ${finished.code}` : `killed by ${finished.signal ?? 'a signal'}`;
  const text = `${status}\n${output}`.trimEnd();
  return finished.code === 0 ? success(text, { exit_code: 0 }) : { ...failure(text), structuredContent: { exit_code: finished.code } };
}

export const shellTool = workspaceTool({
  name: 'shell',
  description:
    'Run a shell command (/bin/sh -c) on this machine, in the workspace or a folder inside it. Answers the exit code and the output (stdout and stderr together). Commands that do not finish in time are killed.',
  inputSchema: toolInput(['command'], {
    command: { type: 'string', minLength: 1, description: 'The command line.' },
    cwd: { type: 'string', description: 'Folder relative to the workspace to run in (default ".").' },
    timeout_seconds: { type: 'integer', minimum: 1, description: 'Time limit (default and maximum: the configured shell limit).' },
  }),
  class: 'exec',
  run: async (args, context, root) => {
    const command = stringArgument(args, 'command');
    if (!command.trim()) throw new ToolError('command must not be empty.');
    const cwd = await resolveInWorkspace(root, stringArgument(args, 'cwd', { fallback: '.' }) || '.', { mustExist: true });
    const asked = typeof args.timeout_seconds === 'number' && args.timeout_seconds >= 1 ? Math.floor(args.timeout_seconds) : context.shellTimeoutSeconds;
    const timeout = Math.min(asked, context.shellTimeoutSeconds);
    const finished = await runCommand(command, cwd, timeout, context.signal, context.processes);
    const result = describe(finished, timeout);
    if (cwd !== root) result.content[0]!.text = `(in ${displayPath(root, cwd)}) ${result.content[0]!.text}`;
    return result;
  },
});
