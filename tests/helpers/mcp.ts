import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkDocument } from '../../companion/src/config/document.js';
import { silentLogger } from '../../companion/src/logger.js';
import { McpManager } from '../../companion/src/mcp/manager.js';
import type { SecretAccess } from '../../companion/src/store/secrets.js';
import type { McpServiceSettings } from '#shared/api/config.js';
import { untilTrue } from './until.js';

const path = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));

export const EVERYTHING = path('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM = path('../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
export const MEMORY = path('../../node_modules/@modelcontextprotocol/server-memory/dist/index.js');
export const MISBEHAVING = path('../fixtures/mcp/misbehaving.mjs');
export const LOOPBACK_ONLY = path('../fixtures/mcp/loopback-only.mjs');

/** What a raw client of the /mcp endpoint (no SDK) sends with each POST. */
export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The JSON-RPC `initialize` request of a raw client. */
export function initializeBody(protocolVersion: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
}

/** POSTs `initialize` to `<base>/mcp` with MCP_HEADERS and `headers`; the answer comes back unread (its session id is in `mcp-session-id`). */
export function initializeMcp(base: string, protocolVersion: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: initializeBody(protocolVersion) });
}

/** Secrets kept in memory, as the manager sees the secrets file. */
export function memorySecrets(values: Record<string, string> = {}): SecretAccess & { values: Record<string, string> } {
  return {
    values,
    resolve: (reference) =>
      reference.startsWith('secret:') ? values[reference.slice(7)] : reference.startsWith('env:') ? process.env[reference.slice(4)] : undefined,
    set: (name, value) => void (values[name] = value),
    delete: (name) => delete values[name],
  };
}

/** mcp_services entries as the configuration document would have them (defaults filled, validated). */
export function serviceSettings(services: Record<string, unknown>[]): McpServiceSettings[] {
  const { document, problems } = checkDocument({ version: 1, mcp_services: services });
  if (!document) throw new Error(`invalid mcp_services: ${problems.join('; ')}`);
  return document.mcp_services;
}

/** A manager (not started) for these services; every service gets HEARTH_TEST_MARKER in its environment. */
export function testManager(services: Record<string, unknown>[], options: { secrets?: SecretAccess; marker?: string } = {}): McpManager {
  const marked = services.map((service) =>
    service.transport === 'stdio' && options.marker ? { ...service, env: { ...(service.env as object), HEARTH_TEST_MARKER: options.marker } } : service,
  );
  return new McpManager({ services: serviceSettings(marked), secrets: options.secrets ?? memorySecrets(), log: silentLogger, version: 'test' });
}

export function stdioService(name: string, args: string[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, transport: 'stdio', command: process.execPath, args, ...extra };
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie has exited; it only waits for its parent to collect it.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Waits until the condition holds (polling, see helpers/until.ts); fails the test after timeoutMs. Not a timing assertion. */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  await untilTrue(condition, what, timeoutMs);
}

/** Pids of live processes whose environment carries this marker (children and grandchildren alike). */
export function processesWithMarker(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').includes(`HEARTH_TEST_MARKER=${marker}`) && alive(Number(entry))) pids.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours.
    }
  }
  return pids;
}

export interface FixtureServer {
  url: string;
  address: string;
  port: number;
  process: ChildProcess;
  stderr(): string;
  stop(): Promise<void>;
}

/** Runs the everything server's HTTP mode (streamableHttp or sse) forced onto 127.0.0.1, on a free port. */
export async function startEverythingHttp(mode: 'streamableHttp' | 'sse', marker?: string): Promise<FixtureServer> {
  const child = spawn(process.execPath, [LOOPBACK_ONLY, EVERYTHING, mode], {
    env: { ...process.env, PORT: '0', ...(marker ? { HEARTH_TEST_MARKER: marker } : {}) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const [address, port] = await new Promise<[string, number]>((resolve, reject) => {
    child.stderr!.on('data', () => {
      const match = /FIXTURE_LISTENING (\S+) (\d+)/.exec(err);
      if (match) resolve([match[1]!, Number(match[2])]);
    });
    void exited.then(() => reject(new Error(`everything ${mode} exited early:\n${err}`)));
  });
  return {
    url: `http://127.0.0.1:${port}${mode === 'sse' ? '/sse' : '/mcp'}`,
    address,
    port,
    process: child,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
