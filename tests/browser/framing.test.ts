/**
 * The app's Content-Security-Policy (14): no other site may frame it (clickjacking of load and
 * unload), and the app still works whole under it: the service worker, the WebAssembly engine
 * in its worker, and a chat with an in-browser model, with no policy violation anywhere.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinyModelPath } from '../helpers/models.js';
import { replyEnds, send, setSetting, signIn, newSignInLink } from './app-helpers.js';
import { DESKTOP, sharedBrowserApp, waitForServiceWorker, watch } from './harness.js';

let attacker: Server;
let attackerUrl: string;

const app = sharedBrowserApp();
beforeAll(async () => {
  // Another site (another port is another origin) that frames the app's server page.
  attacker = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>bait</title><iframe id="app" src="${app.server.url}/server"></iframe>`);
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;
});
afterAll(() => attacker?.close());

describe('framing', () => {
  it('another site cannot frame the app, even a signed-in one', async () => {
    const context = await app.browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await signIn(page, await newSignInLink(app.server));
    const messages: string[] = [];
    page.on('console', (message) => messages.push(message.text()));
    await page.goto(attackerUrl);
    await expect.poll(() => messages.some((text) => /frame-ancestors|X-Frame-Options/.test(text)), { timeout: 10_000 }).toBe(true);
    const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
    const title = await frame?.evaluate(() => document.title).catch(() => 'blocked');
    expect(title).not.toBe('Server · Hearth');
    await context.close();
  });
});

describe('the app under its policy', () => {
  it('registers its service worker, runs the WebAssembly engine and chats, with no violation', async () => {
    const context = await app.browser.newContext({ viewport: DESKTOP });
    await context.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { __violations: string[] }).__violations = seen;
      document.addEventListener('securitypolicyviolation', (event) => seen.push(`${event.violatedDirective} ${event.blockedURI}`));
    });
    const page = await context.newPage();
    const errors = watch(page);
    await page.goto(`${app.server.url}/models`);
    await waitForServiceWorker(page);
    await page.getByTestId('wllama-status').getByText('Ready').waitFor();
    await page.getByLabel('Add a GGUF file from this device').setInputFiles(await tinyModelPath());
    const card = page.getByRole('listitem', { name: 'tiny-1', exact: true });
    await card.getByRole('button', { name: 'Use in chat' }).click();
    await page.waitForURL(`${app.server.url}/`);
    await setSetting(page, 'Max tokens', '8');
    await send(page, 'Hello under a policy');
    expect((await replyEnds(page, 'done', 120_000)).length).toBeGreaterThan(0);
    expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
