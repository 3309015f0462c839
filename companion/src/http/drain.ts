import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** How long closing waits for open responses to end before cutting their connections. */
const DRAIN_MS = 10_000;

/**
 * Closing ends in-flight requests before connections are cut: `stopWork` aborts open streams
 * and generations (they end early and say so), then closing waits until their responses are
 * finished, at most DRAIN_MS, before Fastify destroys the remaining connections.
 */
export function installDrain(app: FastifyInstance, stopWork: () => void): void {
  const open = new Set<ServerResponse>();
  let drained: (() => void) | undefined;
  app.addHook('onRequest', async (_request, reply) => {
    open.add(reply.raw);
    reply.raw.once('close', () => {
      open.delete(reply.raw);
      if (open.size === 0) drained?.();
    });
  });
  app.addHook('preClose', async () => {
    stopWork();
    if (open.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      drained = resolve;
      timer = setTimeout(resolve, DRAIN_MS);
    });
    clearTimeout(timer);
  });
}
