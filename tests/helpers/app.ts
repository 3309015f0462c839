import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../companion/src/app.js';
import { silentLogger, type Logger } from '../../companion/src/logger.js';
import { createServices, type Services } from '../../companion/src/services.js';
import { newDataDir } from './server.js';

/** The real app on a fresh data directory (removed after the test file), for `inject` route tests. */
export async function testApp(
  options: { withModel?: boolean; dataDir?: string; log?: Logger } = {},
): Promise<{ app: FastifyInstance; services: Services; close(): Promise<void> }> {
  const dataDir = options.dataDir ?? (await newDataDir(options.withModel ?? true));
  const services = await createServices({ dataDir, externalSources: false, log: options.log ?? silentLogger, version: 'test' });
  const app = await buildApp({ services, webRoot: '/nonexistent' });
  return {
    app,
    services,
    async close() {
      await app.close();
      await services.close();
    },
  };
}
