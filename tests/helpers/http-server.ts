import type { Server } from 'node:http';

/** Closes a test HTTP server at once: open connections (keep-alive, streams) are cut, not waited for. */
export function closeServer(server: Pick<Server, 'closeAllConnections' | 'close'>): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}
