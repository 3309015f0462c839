import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { loadedSdk } from './sdk.js';
import { ProcessTransport } from './stdio-transport.js';

/** One open connection to a service. */
export interface Session {
  client: Client;
  transport: Transport;
  protocol: 'stdio' | 'streamable-http' | 'sse';
}

/** Transports opened by one connection attempt, so a timeout can end them at once. */
export class Attempt {
  readonly transports: Transport[] = [];
  private abandoned = false;

  add<T extends Transport>(transport: T): T {
    this.transports.push(transport);
    if (this.abandoned) void transport.close().catch(() => undefined);
    return transport;
  }

  async abandon(): Promise<void> {
    this.abandoned = true;
    await Promise.all(this.transports.map((transport) => transport.close().catch(() => undefined)));
  }

  /** The service's process, when this attempt started one. */
  get process(): ProcessTransport | undefined {
    return this.transports.find((transport): transport is ProcessTransport => transport instanceof ProcessTransport);
  }

  /** A failure's message with what the process said on its way out: exit status, last stderr line, stray stdout. */
  explain(message: string): string {
    const process = this.process;
    if (!process) return message;
    const parts = [message];
    const exit = process.exitStatus;
    if (exit) parts.push(`The process ${exit.signal ? `was ended by ${exit.signal}` : `exited with code ${exit.code}`}.`);
    const last = process.stderrTail.at(-1);
    if (last) parts.push(`Its last error output: ${last}`);
    if (process.junkLines > 0)
      parts.push(`It wrote ${process.junkLines} line(s) to stdout that are not MCP messages (stdout must carry only JSON-RPC), e.g. "${process.firstJunk}".`);
    return parts.join(' ');
  }
}

/** Closes a session: an HTTP session is ended at the service (briefly, best effort), a process is ended. */
export async function closeSession(session: Session): Promise<void> {
  const streamable = loadedSdk()?.StreamableHTTPClientTransport;
  if (streamable && session.transport instanceof streamable && session.transport.sessionId) {
    const ended = session.transport.terminateSession().catch(() => undefined);
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
  }
  try {
    await session.client.close();
  } catch {
    // Already closed.
  }
  await session.transport.close().catch(() => undefined);
}
