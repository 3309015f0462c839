import type { TLSSocket, TlsOptions } from 'node:tls';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serverOptions } from './app.js';
import { installChannelPerimeter } from './http/channel-perimeter.js';
import { installDataFolderGuard } from './http/data-folder.js';
import { installErrorHandling } from './http/error-handler.js';
import { installJsonBodies } from './http/json-body.js';
import { routeContexts } from './routes/contexts.js';
import { channelRoutes } from './routes/channel.js';
import type { Services } from './services.js';

export interface ChannelAppOptions {
  services: Services;
  /** From ChannelHost.prepare(): the host certificate, the device CA, TLS 1.3 only. */
  tls: TlsOptions;
  logger?: FastifyBaseLogger;
}

/**
 * The secure channel's app: HTTPS with client certificates, pairing for anyone, the granted
 * agents for paired devices. It shares nothing with the local listener's route table: admin,
 * inference, tools and memory routes do not exist here.
 */
export async function buildChannelApp(options: ChannelAppOptions): Promise<FastifyInstance> {
  const { services } = options;
  const app = Fastify({ ...serverOptions(options), https: options.tls }) as unknown as FastifyInstance;
  app.removeContentTypeParser('text/plain');
  installJsonBodies(app);
  app.server.on('secureConnection', (socket: TLSSocket) => services.channel.attach(socket));
  installErrorHandling(app);
  installChannelPerimeter(app, services.channel);
  installDataFolderGuard(app, services.dataFolder);
  await app.register(channelRoutes, routeContexts(services).channel);
  return app;
}
