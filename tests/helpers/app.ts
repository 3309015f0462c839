import { readFileSync, writeFileSync } from 'node:fs';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterEach } from 'vitest';
import { buildApp } from '../../companion/src/app.js';
import { silentLogger, type Logger } from '../../companion/src/logger.js';
import { createServices, type Services } from '../../companion/src/services.js';
import { perFile } from './per-file.js';
import { newDataDir } from './server.js';

export interface TestApp {
  /**
   * The app. Its `inject` sends a request exactly as given (another local process, an attacker),
   * except one wrapped in `asOwner(...)`, which carries the local admin credential as the app's
   * owner would: a test that needs the credential asks for it, whatever family its path is in.
   */
  app: FastifyInstance;
  services: Services;
  close(): Promise<void>;
}

const OWNER = Symbol('owner');
type OwnerRequest = InjectOptions & { [OWNER]?: true };

/** `request` sent with the local admin credential (`Authorization: Bearer` the admin token), as the machine's owner. */
export function asOwner<T extends InjectOptions>(request: T): T {
  return { ...request, [OWNER]: true };
}

export interface TestAppOptions {
  /** Put the tiny model in the data directory (default true). */
  withModel?: boolean;
  dataDir?: string;
  log?: Logger;
  /** The built web app it serves (default: none). */
  webRoot?: string;
  /** Compile every route's schemas when the app starts (default: at each route's first request, as Hearth does). */
  schemasAtStart?: boolean;
}

/** The real app on a fresh data directory (removed after the test file), for `inject` route tests. */
export async function testApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = options.dataDir ?? (await newDataDir(options.withModel ?? true));
  // HEARTH_ENGINE picks the engine as it does for `hearth serve` (the vitest projects set it).
  const engine = process.env.HEARTH_ENGINE as 'auto' | 'server' | 'in-process' | undefined;
  const services = await createServices({ dataDir, externalSources: false, engine, log: options.log ?? silentLogger, version: 'test' });
  const app = await buildApp({ services, webRoot: options.webRoot ?? '/nonexistent', schemasAtStart: options.schemasAtStart });
  const raw = app.inject.bind(app) as (options?: InjectOptions | string) => Promise<LightMyRequestResponse>;
  const withOwner = (request: InjectOptions | string): InjectOptions | string => {
    if (typeof request === 'string' || !(request as OwnerRequest)[OWNER]) return request;
    const { [OWNER]: _owner, ...rest } = request as OwnerRequest;
    return { ...rest, headers: { ...rest.headers, authorization: `Bearer ${services.admin.token}` } };
  };
  // The chained form (app.inject() with no options) is passed through untouched.
  (app as { inject: unknown }).inject = (request?: InjectOptions | string) => (request === undefined ? raw() : raw(withOwner(request)));
  return {
    app,
    services,
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
    close: () => shared.value.built.close(),
  };
}
