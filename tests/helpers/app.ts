import { readFileSync, writeFileSync } from 'node:fs';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterEach } from 'vitest';
import { buildApp } from '../../companion/src/app.js';
import { silentLogger, type Logger } from '../../companion/src/logger.js';
import { familyOf } from '../../companion/src/http/perimeter.js';
import { createServices, type Services } from '../../companion/src/services.js';
import { perFile } from './per-file.js';
import { newDataDir } from './server.js';

export interface TestApp {
  /** The app; its `inject` adds the local admin credential to admin-guarded requests (/admin, /agents/approvals) that carry no Authorization. */
  app: FastifyInstance;
  services: Services;
  /** inject exactly as given: no admin credential added (another local process, an attacker). */
  injectWithoutAdmin(options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Put the tiny model in the data directory (default true). */
  withModel?: boolean;
  dataDir?: string;
  log?: Logger;
  /** The built web app it serves (default: none). */
  webRoot?: string;
}

/** The real app on a fresh data directory (removed after the test file), for `inject` route tests. */
export async function testApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = options.dataDir ?? (await newDataDir(options.withModel ?? true));
  // HEARTH_ENGINE picks the engine as it does for `hearth serve` (the vitest projects set it).
  const engine = process.env.HEARTH_ENGINE as 'auto' | 'server' | 'in-process' | undefined;
  const services = await createServices({ dataDir, externalSources: false, engine, log: options.log ?? silentLogger, version: 'test' });
  const app = await buildApp({ services, webRoot: options.webRoot ?? '/nonexistent' });
  const raw = app.inject.bind(app) as (options?: InjectOptions | string) => Promise<LightMyRequestResponse>;
  const adminToken = (services as Partial<Services> & { admin?: { token: string } }).admin?.token;
  const withAdmin = (request: InjectOptions | string): InjectOptions | string => {
    const target = typeof request === 'string' ? { url: request } : request;
    const url = typeof target.url === 'string' ? target.url : (target.path as string | undefined);
    const headers = { ...target.headers };
    const guarded = url !== undefined && familyOf(url.split('?')[0]!) === 'admin';
    if (!adminToken || !guarded || Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) return request;
    return { ...target, headers: { ...headers, authorization: `Bearer ${adminToken}` } } as InjectOptions;
  };
  // The chained form (app.inject() with no options) is passed through untouched.
  (app as { inject: unknown }).inject = (request?: InjectOptions | string) => (request === undefined ? raw() : raw(withAdmin(request)));
  return {
    app,
    services,
    injectWithoutAdmin: (request) => raw(request),
    async close() {
      await app.close();
      await services.close();
    },
  };
}

export interface SharedApp extends TestApp {
  /** The configuration in force when the app was built. */
  readonly baseline: Services['config'];
}

/**
 * One test app for the tests of a file (or of a describe block): built before the first test
 * (with what `prepare` adds to the options: a data directory, a web root), closed after the last;
 * with `resetConfig`, the configuration it started with is put back after every test, in force
 * and in config.yaml. Its members are read inside tests and hooks, once it is built.
 */
export function sharedApp(options: TestAppOptions & { prepare?: () => Promise<TestAppOptions> | TestAppOptions; resetConfig?: boolean } = {}): SharedApp {
  const shared = perFile(
    'The shared test app',
    async () => {
      const built = await testApp({ ...options, ...(await options.prepare?.()) });
      return { built, config: built.services.config, text: readFileSync(built.services.paths.config, 'utf8') };
    },
    ({ built }) => built.close(),
  );
  if (options.resetConfig)
    afterEach(() => {
      if (!shared.started) return;
      const { built, config, text } = shared.value;
      if (readFileSync(built.services.paths.config, 'utf8') !== text) writeFileSync(built.services.paths.config, text);
      built.services.reconfigure(config);
    });
  return {
    get app() {
      return shared.value.built.app;
    },
    get services() {
      return shared.value.built.services;
    },
    get baseline() {
      return shared.value.config;
    },
    injectWithoutAdmin: (request) => shared.value.built.injectWithoutAdmin(request),
    close: () => shared.value.built.close(),
  };
}
