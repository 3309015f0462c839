import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { httpStatus } from './failures.js';
import { loadSdk } from './sdk.js';

export interface HttpOptions {
  /** Sent with every request (token and header authentication); never logged. */
  headers: Record<string, string>;
  authProvider?: OAuthClientProvider;
  newClient(): Client;
  /** Registers a transport with the attempt, so a timeout can close it. */
  track<T extends Transport>(transport: T): T;
}

/**
 * Connects to an HTTP MCP endpoint: Streamable HTTP first; when the endpoint answers that
 * with 400, 404 or 405 (a server that only speaks the older HTTP+SSE transport), the SSE
 * transport on the same URL. Authentication failures never fall back.
 */
export async function openHttp(url: URL, options: HttpOptions): Promise<{ client: Client; transport: Transport; protocol: 'streamable-http' | 'sse' }> {
  const { SSEClientTransport, StreamableHTTPClientTransport } = await loadSdk();
  const requestInit = { headers: options.headers };
  const streamable = options.track(new StreamableHTTPClientTransport(url, { requestInit, authProvider: options.authProvider }));
  const client = options.newClient();
  try {
    await client.connect(streamable);
    return { client, transport: streamable, protocol: 'streamable-http' };
  } catch (error) {
    const status = httpStatus(error);
    if (status === undefined || ![400, 404, 405].includes(status)) throw error;
    await client.close().catch(() => undefined);
  }
  const sse = options.track(new SSEClientTransport(url, { requestInit, authProvider: options.authProvider }));
  const fallback = options.newClient();
  await fallback.connect(sse);
  return { client: fallback, transport: sse, protocol: 'sse' };
}
