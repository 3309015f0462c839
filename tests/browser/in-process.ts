/**
 * The companion built in this process, for a browser test that reaches into it (its services) or
 * serves a web app of its own: the real app on a fresh data folder, on a free port of 127.0.0.1,
 * with Chromium beside it.
 */
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { buildApp } from '../../companion/src/app.js';
import { silentLogger } from '../../companion/src/logger.js';
import { createServices, type Services } from '../../companion/src/services.js';
import { newDataDir } from '../helpers/server.js';
import { launch } from './harness.js';

/** The web app as `npm run build:web` built it. */
export const BUILT_WEB = fileURLToPath(new URL('../../build/web', import.meta.url));

export interface InProcessApp {
  services: Services;
  url: string;
  browser: Browser;
  /** Closes Chromium, then the app and its services. */
  close(): Promise<void>;
}

/** Starts the app (serving `webRoot`, default the built app; the tiny model unless `withModel` is false) and Chromium side by side. */
export async function startInProcessApp(options: { webRoot?: string; withModel?: boolean } = {}): Promise<InProcessApp> {
  const companion = (async () => {
    const services = await createServices({ dataDir: await newDataDir(options.withModel ?? true), externalSources: false, log: silentLogger, version: 'test' });
    const app = await buildApp({ services, webRoot: options.webRoot ?? BUILT_WEB });
    return { services, app, url: await app.listen({ host: '127.0.0.1', port: 0 }) };
  })();
  const [started, launched] = await Promise.allSettled([companion, launch()]);
  if (started.status === 'rejected' || launched.status === 'rejected') {
    if (launched.status === 'fulfilled') await launched.value.close();
    if (started.status === 'fulfilled') await started.value.app.close().then(() => started.value.services.close());
    throw started.status === 'rejected' ? started.reason : (launched as PromiseRejectedResult).reason;
  }
  const { services, app, url } = started.value;
  const browser = launched.value;
  return {
    services,
    url,
    browser,
    async close() {
      await browser.close();
      await app.close();
      await services.close();
    },
  };
}
