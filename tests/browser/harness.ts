/** Real Chromium (Debian's) driven by playwright-core, headless, sandbox off, no GPU, no background networking. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { perFile } from '../helpers/per-file.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { newSignInLink, signIn } from './app-helpers.js';
import { CHROMIUM } from './chromium.js';

export { CHROMIUM, chromiumMissing } from './chromium.js';

export const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const SCREENSHOTS = fileURLToPath(new URL('../../test-results/screenshots/', import.meta.url));

export function launch(extraFlags: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...FLAGS, ...extraFlags] });
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/**
 * Whether this run takes the pictures (`npm run screenshots` sets HEARTH_SCREENSHOTS=1): every
 * screen in both widths and both colour schemes, saved under test-results/screenshots/. `npm test`
 * looks at each screen once, on the phone in light, where a layout overflows first, and runs the
 * same checks there; looking at it three times more only made pictures.
 */
export const PICTURES = process.env.HEARTH_SCREENSHOTS === '1';

type Size = readonly ['desktop' | 'phone', { width: number; height: number }];

/** The widths every screen is looked at in (the phone only, unless PICTURES). */
export const SIZES: readonly Size[] = PICTURES
  ? [
      ['desktop', DESKTOP],
      ['phone', PHONE],
    ]
  : [['phone', PHONE]];
/** The colour schemes every screen is looked at in (light only, unless PICTURES). */
export const SCHEMES: readonly ('light' | 'dark')[] = PICTURES ? ['light', 'dark'] : ['light'];

/**
 * A page in a new context (desktop-sized unless `options` say otherwise) whose page errors and
 * console errors are collected (and printed when HEARTH_DEBUG is set), at `url`. With `signInLink`
 * the browser signs in through it first, as a person does; `onContext` is given the context before
 * the page opens (to record its requests from the first one, say).
 */
export async function open(
  browser: Browser,
  url: string,
  options: BrowserContextOptions & { signInLink?: string; onContext?: (context: BrowserContext) => void } = {},
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const { signInLink, onContext, ...contextOptions } = options;
  const context = await browser.newContext({ viewport: DESKTOP, ...contextOptions });
  onContext?.(context);
  const page = await context.newPage();
  const errors = watch(page);
  if (signInLink) await signIn(page, signInLink);
  await page.goto(url);
  return { context, page, errors };
}

export function watch(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (process.env.HEARTH_DEBUG) console.log(`[browser ${message.type()}] ${message.text()}`);
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  return errors;
}

/** Saves what `page` shows as test-results/screenshots/NAME.png, when this run takes the pictures (PICTURES). */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  if (!PICTURES) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: options.fullPage ?? false });
}

/** Resolves once a service worker controls the page (installing and activating take a moment). */
export async function waitForServiceWorker(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const registration = await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      await new Promise<void>((resolve) => navigator.serviceWorker.addEventListener('controllerchange', () => resolve(), { once: true }));
    }
    return registration.active?.state;
  });
}

/** How a page of the app is opened: context options as for `open`, at `path` on the companion, signed in first with `signIn`. */
export type AppPageOptions = BrowserContextOptions & { path?: string; signIn?: boolean; onContext?: (context: BrowserContext) => void };

/** What `startApp` starts. */
export interface AppOptions {
  /** Starts the companion (default: `startServer()`, the tiny model in a fresh data folder). */
  server?: () => Promise<RunningServer>;
  /** Chromium flags besides FLAGS. */
  flags?: string[];
  /** What the companion must have before the page opens (something to show, say). */
  prepare?: (server: RunningServer) => Promise<unknown>;
  /** A page to open once both run (its context, page and errors are the app's); none without it. */
  page?: AppPageOptions;
}

/** The companion and the Chromium that looks at it, as the browser tests use them. */
export interface BrowserApp {
  readonly server: RunningServer;
  readonly browser: Browser;
  /** The page that `page` in the options opened, its context and the errors it collects. */
  readonly context: BrowserContext;
  readonly page: Page;
  readonly errors: string[];
  /** A page in a new context at `path` (default '/') on the companion, signed in first with a fresh link when `signIn`. */
  open(path?: string, options?: Omit<AppPageOptions, 'path'>): Promise<{ context: BrowserContext; page: Page; errors: string[] }>;
  /** Closes Chromium, then stops the companion. */
  close(): Promise<void>;
}

/**
 * Starts the companion and Chromium side by side (a failed start closes what did start), then
 * `prepare`s the companion and, with `page`, opens the app's page.
 */
export async function startApp(options: AppOptions = {}): Promise<BrowserApp> {
  const [started, launched] = await Promise.allSettled([options.server ? options.server() : startServer(), launch(options.flags)]);
  if (started.status === 'rejected' || launched.status === 'rejected') {
    if (launched.status === 'fulfilled') await launched.value.close();
    if (started.status === 'fulfilled') await started.value.stop();
    throw started.status === 'rejected' ? started.reason : (launched as PromiseRejectedResult).reason;
  }
  const server = started.value;
  const browser = launched.value;
  const openPage: BrowserApp['open'] = async (path = '/', { signIn: signedIn, ...contextOptions } = {}) =>
    open(browser, `${server.url}${path}`, { ...contextOptions, signInLink: signedIn ? await newSignInLink(server) : undefined });
  const close = async () => {
    await browser.close();
    await server.stop();
  };
  let first: Awaited<ReturnType<BrowserApp['open']>> | undefined;
  try {
    await options.prepare?.(server);
    if (options.page) {
      const { path, ...pageOptions } = options.page;
      first = await openPage(path, pageOptions);
    }
  } catch (error) {
    await close();
    throw error;
  }
  const opened = <K extends 'context' | 'page' | 'errors'>(key: K) => {
    if (!first) throw new Error(`The app opened no page: give startApp a \`page\` to read its ${key}.`);
    return first[key];
  };
  return {
    server,
    browser,
    get context() {
      return opened('context');
    },
    get page() {
      return opened('page');
    },
    get errors() {
      return opened('errors');
    },
    open: openPage,
    close,
  };
}

/**
 * One app (`startApp`) for the tests of a file (or of a describe block): started before the first
 * test, closed after the last. Its members are read inside tests and hooks. Hooks registered above
 * this call run before the start and after the close (a provider the companion talks to, say).
 */
export function sharedBrowserApp(options: AppOptions = {}): BrowserApp {
  const shared = perFile(
    'The shared browser app',
    () => startApp(options),
    (app) => app.close(),
  );
  return {
    get server() {
      return shared.value.server;
    },
    get browser() {
      return shared.value.browser;
    },
    get context() {
      return shared.value.context;
    },
    get page() {
      return shared.value.page;
    },
    get errors() {
      return shared.value.errors;
    },
    open: (path, pageOptions) => shared.value.open(path, pageOptions),
    close: () => shared.value.close(),
  };
}
