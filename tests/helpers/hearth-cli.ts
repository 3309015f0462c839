import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { cleanEnv, HEARTH_BIN, REPO_ROOT } from './hearth-process.js';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `hearth ...args` to completion, optionally writing `stdin` to its standard input
 * (for `hearth secret set NAME`). Killed after timeoutMs.
 */
export function runHearth(args: string[], options: { stdin?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [HEARTH_BIN, ...args], { env: options.env ?? cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'], cwd: REPO_ROOT });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin!.end(options.stdin ?? '');
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends one hand-written HTTP/1.1 request over a socket to 127.0.0.1:port, so the request
 * target can be anything (absolute-form, undecoded escapes, dot segments) exactly as written.
 */
export function rawRequest(port: number, requestLine: string, headers: Record<string, string>): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      const lines = Object.entries({ connection: 'close', ...headers }).map(([name, value]) => `${name}: ${value}`);
      socket.write(`${requestLine}\r\n${lines.join('\r\n')}\r\n\r\n`);
    });
    let data = '';
    socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const split = data.indexOf('\r\n\r\n');
      const head = data.slice(0, split).split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head[0] ?? '')?.[1]);
      const parsed: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const colon = line.indexOf(':');
        parsed[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status, headers: parsed, body: data.slice(split + 4) });
    });
  });
}
