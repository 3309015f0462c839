import { createServer, request as forward, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './http-server.js';

export interface ReverseProxy {
  url: string;
  close(): Promise<void>;
}

/**
 * A small real reverse proxy on 127.0.0.1, configured the way nginx (`proxy_pass
 * http://127.0.0.1:PORT;` plus the usual `proxy_set_header X-Forwarded-For`) or Apache
 * (`ProxyPreserveHost Off`) commonly are: it connects from loopback, rewrites Host to the
 * upstream's loopback address, and adds the forwarding headers given (by default an
 * X-Forwarded-For naming a remote client). Bodies are streamed both ways.
 */
export async function startReverseProxy(upstream: string, added: IncomingHttpHeaders = { 'x-forwarded-for': '203.0.113.50' }): Promise<ReverseProxy> {
  const target = new URL(upstream);
  const server = createServer((incoming, outgoing) => {
    const headers: IncomingHttpHeaders = { ...incoming.headers, host: target.host, ...added };
    const upstreamRequest = forward({ host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    upstreamRequest.on('error', () => outgoing.destroy());
    incoming.pipe(upstreamRequest);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => closeServer(server),
  };
}
