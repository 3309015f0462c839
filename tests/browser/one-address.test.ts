/**
 * One address for the app: conversations (IndexedDB) and the sign-in (the session's proof in
 * localStorage) belong to an origin, so the same companion at localhost would look empty and
 * signed out. Opening it there moves the browser to the address Hearth prints.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../helpers/server.js';
import { newSignInLink, signIn } from './app-helpers.js';
import { DESKTOP, launch } from './harness.js';

let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  server = await startServer({ withModel: false });
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('one address', () => {
  it('a browser signed in at 127.0.0.1 that opens localhost lands at 127.0.0.1, still signed in', async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    try {
      const page = await context.newPage();
      await signIn(page, await newSignInLink(server));
      const port = new URL(server.url).port;
      await page.goto(`http://localhost:${port}/server?from=bookmark`);
      expect(page.url()).toBe(`${server.url}/server?from=bookmark`);
      await page.getByTestId('signed-in').waitFor();
    } finally {
      await context.close();
    }
  });
});
