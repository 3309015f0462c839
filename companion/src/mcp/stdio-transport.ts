import { spawn, type ChildProcess } from 'node:child_process';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { loadSdk, sdk } from './sdk.js';

export interface ProcessOptions {
  command: string;
  args: string[];
  /** Added to a minimal inherited environment (HOME, PATH, ...): Hearth's own environment is not passed on. */
  env: Record<string, string>;
  cwd?: string;
  /** Applied to everything kept from the process's output (diagnostics never carry a secret). */
  redact: (text: string) => string;
}

const POSIX = process.platform !== 'win32';
const STDERR_LINES = 20;
/** One message larger than this ends the connection (the SDK's own limit). */
const MAX_LINE_BYTES = 10 * 1024 * 1024;

/**
 * An MCP stdio client transport that owns its process: the service runs in its own process
 * group so closing ends it and anything it started; stderr is kept (redacted, last lines) for
 * diagnostics instead of reaching Hearth's log; lines on stdout that are not JSON-RPC are
 * counted and skipped.
 */
export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child?: ChildProcess;
  private pending: Buffer = Buffer.alloc(0);
  private readonly stderrLines: string[] = [];
  private partialStderr = '';
  private exit?: { code: number | null; signal: NodeJS.Signals | null };
  private closed?: Promise<void>;
  /** Lines on stdout that were not MCP messages, and the first of them (redacted, shortened). */
  junkLines = 0;
  firstJunk: string | undefined;

  constructor(private readonly options: ProcessOptions) {}

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** How the process ended, once it did. */
  get exitStatus(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.exit;
  }

  /** The last lines the process wrote to stderr, redacted. */
  get stderrTail(): string[] {
    return [...this.stderrLines];
  }

  async start(): Promise<void> {
    if (this.child) throw new Error('ProcessTransport already started');
    const { getDefaultEnvironment } = await loadSdk();
    return new Promise((resolve, reject) => {
      const child = spawn(this.options.command, this.options.args, {
        env: { ...getDefaultEnvironment(), ...this.options.env },
        cwd: this.options.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        windowsHide: true,
        // Its own process group: closing can end the whole tree, not just the direct child.
        detached: POSIX,
      });
      this.child = child;
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => resolve());
      child.once('exit', (code, signal) => {
        // Anything the service started and left behind in its group goes with it, at once
        // (later the group id could belong to someone else).
        this.killGroup('SIGKILL');
        this.exit = { code, signal };
      });
      child.once('close', () => this.onclose?.());
      child.stdin!.on('error', (error) => this.onerror?.(error));
      child.stdout!.on('data', (chunk: Buffer) => this.read(chunk));
      child.stderr!.on('data', (chunk: Buffer) => this.keepStderr(chunk.toString('utf8')));
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || !stdin.writable) throw new Error('Not connected: the service process is not running');
    if (!stdin.write(sdk().serializeMessage(message))) await new Promise<void>((resolve) => stdin.once('drain', resolve));
  }

  /** Ends the process: stdin closed, then SIGTERM, then SIGKILL to its whole group. */
  close(): Promise<void> {
    this.closed ??= this.terminate();
    return this.closed;
  }

  private async terminate(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const gone = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    const wait = (ms: number) => Promise.race([gone.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);
    try {
      child.stdin?.end();
    } catch {
      // Already closed.
    }
    if (!(await wait(1000))) {
      this.killGroup('SIGTERM');
      if (!(await wait(2000))) {
        this.killGroup('SIGKILL');
        await wait(2000);
      }
    }
    this.pending = Buffer.alloc(0);
  }

  private killGroup(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (!pid || this.exit) return;
    try {
      if (POSIX) process.kill(-pid, signal);
      else this.child!.kill(signal);
    } catch {
      // The group is already gone.
    }
  }

  private read(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    for (;;) {
      const newline = this.pending.indexOf(0x0a);
      if (newline < 0) break;
      const line = this.pending.toString('utf8', 0, newline).replace(/\r$/, '');
      this.pending = this.pending.subarray(newline + 1);
      if (!line.trim()) continue;
      let message: JSONRPCMessage;
      try {
        message = sdk().deserializeMessage(line);
      } catch {
        // Not JSON-RPC: a banner or a stray print. Count it; the protocol carries on.
        this.junkLines += 1;
        this.firstJunk ??= this.options.redact(line.slice(0, 120));
        continue;
      }
      this.onmessage?.(message);
    }
    if (this.pending.length > MAX_LINE_BYTES) {
      this.pending = Buffer.alloc(0);
      this.onerror?.(new Error(`the service sent a line longer than ${MAX_LINE_BYTES} bytes`));
      void this.close();
    }
  }

  private keepStderr(text: string): void {
    const lines = (this.partialStderr + text).split('\n');
    this.partialStderr = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      this.stderrLines.push(this.options.redact(line.slice(0, 500)));
      if (this.stderrLines.length > STDERR_LINES) this.stderrLines.shift();
    }
  }
}
