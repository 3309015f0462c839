/** Real Chromium (Debian's) driven by playwright-core, headless, sandbox off, no GPU, no background networking. */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { signIn } from './app-helpers.js';

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

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or undefined when Chromium is where they look. */
export function chromiumMissing(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  return [
    `The browser tests (tests/browser) need Chromium, and there is none at ${CHROMIUM}.`,
    'Install it (Debian/Ubuntu: sudo apt-get install -y chromium), or set CHROMIUM_PATH to a',
    'Chromium or Google Chrome binary, e.g. CHROMIUM_PATH=/usr/bin/google-chrome npm test.',
  ].join('\n');
}

export function launch(extraFlags: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...FLAGS, ...extraFlags] });
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** The looks screens are checked and photographed in: each size (desktop, phone) in each colour scheme. */
export const LOOKS = (
  [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const
).flatMap(([size, viewport]) => (['light', 'dark'] as const).map((colorScheme) => ({ size, viewport, colorScheme })));

export interface Opened {
  context: BrowserContext;
  page: Page;
  /** Page errors and console errors (printed when HEARTH_DEBUG is set). */
  errors: string[];
}

/**
 * A new context (DESKTOP unless `viewport` says otherwise) and page whose errors are collected.
 * `prepare` runs on the context first (listeners, permissions); then the page signs in through
 * the sign-in link `signIn` when given, and goes to `url` when given.
 */
export async function open(
  browser: Browser,
  options: BrowserContextOptions & { url?: string; signIn?: string; prepare?(context: BrowserContext): unknown } = {},
): Promise<Opened> {
  const { url, signIn: link, prepare, ...contextOptions } = options;
  const context = await browser.newContext({ viewport: DESKTOP, ...contextOptions });
  await prepare?.(context);
  const page = await context.newPage();
  const errors = watch(page);
  if (link) await signIn(page, link);
  if (url) await page.goto(url);
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

export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
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
