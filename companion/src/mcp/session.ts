import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

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
}

/** Closes a session: an HTTP session is ended at the service (briefly, best effort), a process is ended. */
export async function closeSession(session: Session): Promise<void> {
  if (session.transport instanceof StreamableHTTPClientTransport && session.transport.sessionId) {
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
