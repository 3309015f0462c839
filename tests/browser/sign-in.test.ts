/**
 * The app's sign-in for the companion's admin screens. A started companion opens the browser
 * on a private sign-in file (HEARTH_BROWSER stands in for the system's browser command here,
 * and the test's Chromium opens the file the way a browser would): the app is signed in with
 * no typed step. Signed out, every admin-only screen offers a Sign in button that says how, and
 * nothing the app asks is refused.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchWithoutAdmin } from '../helpers/admin-fetch.js';
import { REPO_ROOT } from '../helpers/hearth-process.js';
/** Where the app keeps how commands are spelled on the companion's machine (web/src/lib/stores/session.svelte.ts). */
const HOW_KEY = 'hearth.commands';
import { newDataDir, startServer, type RunningServer } from '../helpers/server.js';
import { tempFolder } from '../helpers/temp.js';
import { untilTrue } from '../helpers/until.js';
import { newSignInLink, signIn } from './app-helpers.js';
import { DESKTOP, PHONE, launch, screenshot, watch, SIZES, SCHEMES } from './harness.js';

let server: RunningServer;
/** A companion with no model: its empty states, then (stopped by that test) the banner of a stopped companion. */
let empty: RunningServer;
let browser: Browser;
/** What the stand-in browser command was given, one line per start. */
let opened: string;

beforeAll(async () => {
  const folder = tempFolder('browser-command');
  opened = join(folder, 'opened.txt');
  const recorder = join(folder, 'record.mjs');
  // Records its whole command line, as `ps` would show it to any user of the machine.
  writeFileSync(recorder, "import { appendFileSync } from 'node:fs';\nappendFileSync(process.argv[2], JSON.stringify(process.argv.slice(3)) + '\\n');\n");
  // Independent starts, overlapped.
  [server, empty, browser] = await Promise.all([
    newDataDir(true).then((dataDir) => startServer({ dataDir, env: { HEARTH_BROWSER: `${process.execPath} ${recorder} ${opened} %s` } })),
    startServer({ withModel: false }),
    launch(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await Promise.all([server?.stop(), empty?.stop()]);
});

/** Failing requests and console errors of a page (a 401 shows as both). */
function problemsOf(page: Page): string[] {
  const problems = watch(page);
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`);
  });
  return problems;
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  await untilTrue(check, what, timeoutMs);
}

describe('signed in without a typed step', () => {
  it('the started companion opens the browser on a 0600 sign-in file; following it signs the app in', async () => {
    await waitFor(() => existsSync(opened), 'the browser command');
    const [argument] = JSON.parse(readFileSync(opened, 'utf8').trim()) as string[];
    const file = join(server.dataDir, 'sign-in.html');
    expect(argument).toBe(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const code = /sign-in#([A-Za-z0-9_-]+)/.exec(readFileSync(file, 'utf8'))![1]!;
    // The code is on no command line and in no log: only in the private file.
    expect(readFileSync(opened, 'utf8')).not.toContain(code);
    expect(server.stderr()).not.toContain(code);
    // The command names the data folder: the server runs on one that is not the default.
    expect(server.stderr()).toContain(
      `Opening Hearth in your browser, signed in. For another browser: npm run hearth -- open --data-dir ${server.dataDir} prints a sign-in link.`,
    );

    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const problems = problemsOf(page);
    await page.goto(pathToFileURL(file).href);
    await page.waitForURL((url) => url.origin === server.url && url.pathname === '/server' && url.hash === '');
    await page.getByTestId('signed-in').waitFor();
    await expect.poll(() => page.getByTestId('models-dirs').innerText()).toContain(`${server.dataDir}/models`);
    expect(await page.getByTestId('server-status').innerText()).toBe('connected');
    // The admin actions work: load a model from the page.
    await page.getByRole('button', { name: 'Load tiny' }).click();
    await page.getByRole('listitem', { name: 'tiny (loaded)', exact: true }).waitFor();
    // Listed once, loaded.
    expect(await page.getByRole('heading', { name: 'tiny', exact: true }).count()).toBe(1);
    const cookies = await context.cookies(`${server.url}/admin/status`);
    expect(cookies.map((cookie) => ({ httpOnly: cookie.httpOnly, sameSite: cookie.sameSite, path: cookie.path }))).toEqual([
      { httpOnly: true, sameSite: 'Strict', path: '/admin' },
    ]);
    expect(problems).toEqual([]);

    // Sign out: the session cookie ends, and the page says how to sign in again, with nothing refused.
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByTestId('sign-in-notice').waitFor();
    expect(await context.cookies(`${server.url}/admin/status`)).toEqual([]);
    const asked = await page.evaluate(async () => (await (await fetch('/admin/session')).json()) as { signed_in: boolean });
    expect(asked.signed_in).toBe(false);
    await page.reload();
    await page.getByTestId('sign-in-notice').waitFor();
    expect(await page.getByTestId('signed-in').count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a page another local user serves on another port of 127.0.0.1 gets the session cookie from the browser, and it opens nothing', async () => {
    const seen: string[] = [];
    const other = createServer((request, response) => {
      if (request.url?.startsWith('/admin/')) seen.push(request.headers.cookie ?? '');
      response.setHeader('content-type', 'text/html');
      response.end('<!doctype html><title>Notebook</title><p>another program</p>');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const context = await browser.newContext({ viewport: DESKTOP });
    try {
      const page = await context.newPage();
      await signIn(page, await newSignInLink(server));
      await page.goto(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`);
      await page.evaluate(async () => void (await fetch('/admin/anything')));
      // Cookies do not separate ports: the browser handed Hearth's session cookie to the other program.
      const stolen = seen.find((cookie) => cookie.includes('hearth_admin_'));
      expect(stolen, seen.join('\n')).toMatch(/hearth_admin_\d+=hses_/);
      const status = await fetchWithoutAdmin(`${server.url}/admin/status`, { headers: { cookie: stolen! } });
      expect(status.status).toBe(401);
      const applied = await fetchWithoutAdmin(`${server.url}/admin/config/apply`, {
        method: 'POST',
        headers: { cookie: stolen!, 'content-type': 'application/json' },
        body: JSON.stringify({ document: { version: 1, mcp_services: { run: { transport: 'stdio', command: 'id' } } }, confirm_high_risk: true }),
      });
      expect(applied.status).toBe(401);
      // The app itself, which holds the proof, is still signed in.
      await page.goto(`${server.url}/server`);
      await page.getByTestId('signed-in').waitFor();
      await expect.poll(() => page.getByTestId('models-dirs').innerText()).toContain(`${server.dataDir}/models`);
    } finally {
      await context.close();
      other.close();
    }
  });

  it('Sign out everywhere ends the session of every browser', async () => {
    const here = await browser.newContext({ viewport: DESKTOP });
    const elsewhere = await browser.newContext({ viewport: PHONE });
    try {
      const page = await here.newPage();
      await signIn(page, await newSignInLink(server));
      const other = await elsewhere.newPage();
      await signIn(other, await newSignInLink(server));
      await page.getByRole('button', { name: 'Sign out everywhere' }).click();
      await page.getByTestId('sign-in-notice').waitFor();
      await other.reload();
      await other.getByTestId('sign-in-notice').waitFor();
      expect(await other.getByTestId('signed-in').count()).toBe(0);
    } finally {
      await here.close();
      await elsewhere.close();
    }
  });

  it('a used link is refused with a way forward, in the command that runs here', async () => {
    const link = await newSignInLink(server);
    const first = await browser.newContext({ viewport: DESKTOP });
    await signIn(await first.newPage(), link);
    await first.close();
    for (const [name, viewport] of SIZES) {
      for (const colorScheme of SCHEMES) {
        const context = await browser.newContext({ viewport, colorScheme });
        const page = await context.newPage();
        await page.goto(link);
        await page.getByRole('alert').filter({ hasText: 'already used or has expired' }).waitFor();
        // The page names the command as it runs here once the companion has said how (it asks on load).
        const command = `npm run hearth -- open --data-dir ${server.dataDir}`;
        await page.getByLabel('Sign-in command').filter({ hasText: command }).waitFor();
        expect(await page.getByLabel('Sign-in command').innerText()).toBe(command);
        expect(page.url()).toBe(`${server.url}/sign-in`);
        expect(await page.locator('main').innerText()).not.toMatch(/`|npx /);
        await screenshot(page, `sign-in-refused-${name}-${colorScheme}`);
        await context.close();
      }
    }
  });
});

describe('one address', () => {
  // Conversations (IndexedDB) and the session's proof (localStorage) belong to an origin: the same
  // companion at localhost would look empty and signed out, so Hearth sends the browser on.
  it('a browser signed in at 127.0.0.1 that opens localhost lands at 127.0.0.1, still signed in', async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    try {
      const page = await context.newPage();
      await signIn(page, await newSignInLink(server));
      await page.goto(`http://localhost:${new URL(server.url).port}/server?from=bookmark`);
      expect(page.url()).toBe(`${server.url}/server?from=bookmark`);
      await page.getByTestId('signed-in').waitFor();
    } finally {
      await context.close();
    }
  });
});

describe('signed out', () => {
  const SCREENS: [string, string][] = [
    ['/server', 'server'],
    ['/models', 'models'],
    ['/models#discover', 'discover'],
    ['/agent', 'agents'],
    ['/devices', 'devices'],
    ['/sign-in', 'sign-in'],
  ];

  it('every admin-only action shows as needing sign-in, with a Sign in button that says how; no request fails', async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const problems = problemsOf(page);
    // (The installed models need no sign-in to be listed or used.)
    for (const [path] of SCREENS.filter(([path]) => path !== '/sign-in' && path !== '/models')) {
      await page.goto(`${server.url}${path}`);
      const notice = page.getByTestId('sign-in-notice');
      await notice.waitFor();
      await notice.getByRole('button', { name: 'Sign in' }).click();
      const command = `npm run hearth -- open --data-dir ${server.dataDir}`;
      await notice.getByLabel('Sign-in command').filter({ hasText: command }).waitFor();
      expect(await notice.getByLabel('Sign-in command').innerText()).toBe(command);
    }
    // No admin action is offered that would fail afterwards.
    await page.goto(`${server.url}/server`);
    await page.getByRole('listitem', { name: 'tiny' }).waitFor();
    expect(await page.getByRole('button', { name: /^(Load|Unload) / }).count()).toBe(0);
    // Never "connected" next to "unknown".
    expect(await page.locator('main').innerText()).not.toMatch(/unknown/i);
    await page.goto(`${server.url}/agent`);
    await page.getByTestId('sign-in-notice').waitFor();
    expect(await page.getByRole('button', { name: 'New agent' }).count()).toBe(0);
    await page.goto(`${server.url}/models`);
    await page.getByRole('listitem', { name: 'tiny' }).waitFor();
    expect(await page.getByRole('button', { name: /^Remove / }).count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  for (const [name, viewport] of SIZES) {
    for (const colorScheme of SCHEMES) {
      it(`looks right signed out and signed in on a ${name}, ${colorScheme}`, async () => {
        const context: BrowserContext = await browser.newContext({ viewport, colorScheme });
        const page = await context.newPage();
        const problems = problemsOf(page);
        for (const [path, screen] of SCREENS) {
          await page.goto(`${server.url}${path}`);
          await (
            path === '/sign-in'
              ? page.getByLabel('Sign-in command')
              : path === '/models'
                ? page.getByRole('listitem', { name: /^tiny/ }).first()
                : page.getByTestId('sign-in-notice')
          ).waitFor();
          const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
          expect(scroll, path).toBeLessThanOrEqual(width);
          await screenshot(page, `first-hour-${screen}-signed-out-${name}-${colorScheme}`, { fullPage: true });
        }
        await signIn(page, await newSignInLink(server));
        for (const [path, screen] of SCREENS.filter(([path]) => path !== '/sign-in' && path !== '/models#discover')) {
          await page.goto(`${server.url}${path}`);
          if (path === '/server') await page.getByTestId('signed-in').waitFor();
          else if (path === '/agent') await page.getByRole('button', { name: 'New agent' }).waitFor();
          else if (path === '/devices') await page.getByTestId('channel-state').filter({ hasText: 'off' }).waitFor();
          else await page.getByRole('listitem', { name: /^tiny/ }).first().waitFor();
          await screenshot(page, `first-hour-${screen}-signed-in-${name}-${colorScheme}`, { fullPage: true });
        }
        expect(problems).toEqual([]);
        await context.close();
      });
    }
  }
});

describe('no model yet', () => {
  it('the Server and Models empty states name every way to get a model that works here', async () => {
    for (const [name, viewport] of SIZES) {
      for (const colorScheme of SCHEMES) {
        const context = await browser.newContext({ viewport, colorScheme });
        const page = await context.newPage();
        const problems = problemsOf(page);
        // The owner's browser: the folders are given only to a signed-in one.
        await signIn(page, await newSignInLink(empty));
        for (const screen of ['server', 'models']) {
          await page.goto(`${empty.url}/${screen}`);
          const help = page.getByTestId('no-models');
          await help.getByText(`${empty.dataDir}/models`).waitFor();
          const text = await help.innerText();
          expect(text).toContain('Discover searches Hugging Face');
          expect(text).toMatch(/LM Studio or Ollama/);
          expect(await help.getByLabel('Test model command').innerText()).toBe(`npm run model:tiny -- --data-dir ${empty.dataDir}`);
          expect(await help.getByRole('link', { name: 'Discover' }).getAttribute('href')).toBe('/models#discover');
          await screenshot(page, `first-hour-empty-${screen}-${name}-${colorScheme}`, { fullPage: true });
        }
        expect(problems).toEqual([]);
        await context.close();
      }
    }
  });
});

describe('the companion stopped', () => {
  it('the banner says how to start it, as it was started on that machine', async () => {
    const context = await browser.newContext({ viewport: PHONE });
    const page = await context.newPage();
    try {
      // The companion told this browser how it is run there (while it answered; the folder only once signed in).
      await signIn(page, await newSignInLink(empty));
      await page.getByTestId('signed-in').waitFor();
      // Signed in, the page asks again and is told the folder: wait for that answer before the companion stops.
      await expect
        .poll(() => page.evaluate((key) => JSON.parse(localStorage.getItem(key) ?? '{}').folder as string | undefined, HOW_KEY))
        .toBe(REPO_ROOT.replace(/\/$/, ''));
      await empty.stop();
      // The app checks again every 10 s and whenever the browser comes back online: the event, rather than the timer.
      await page.evaluate(() => window.dispatchEvent(new Event('online')));
      const banner = page.getByTestId('unreachable');
      await banner.waitFor({ timeout: 30_000 });
      expect(await banner.innerText()).toBe(
        `The companion is not answering. To start it, run npm start in the Hearth folder (${REPO_ROOT.replace(/\/$/, '')}). Your conversations are here, and models stored in this browser keep working.`,
      );
      await screenshot(page, 'first-hour-unreachable-phone-light');
    } finally {
      await context.close();
      await empty.stop();
    }
  });
});

describe('the theme', () => {
  it('follows the system, or the choice this browser remembers, with no flash of the other theme on load', async () => {
    const context = await browser.newContext({ viewport: DESKTOP, colorScheme: 'dark' });
    const page = await context.newPage();
    const problems = problemsOf(page);
    await page.goto(`${server.url}/server`);
    const shown = () => page.evaluate(() => document.documentElement.dataset.theme);
    const background = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    expect(await shown()).toBe('dark');
    const theme = page.getByLabel('Theme');
    await theme.selectOption('light');
    expect(await shown()).toBe('light');
    expect(await background()).toBe('rgb(247, 241, 234)');

    // Before the app's own code runs (here it never does: its scripts are refused), the saved choice is in force.
    const scripts = (url: URL) => url.pathname.endsWith('.js');
    await page.route(scripts, (route) => route.abort());
    await page.reload();
    expect(await shown()).toBe('light');
    expect(await background()).toBe('rgb(247, 241, 234)');
    await page.unroute(scripts);

    await page.reload();
    await page.getByLabel('Theme').selectOption('system');
    expect(await shown()).toBe('dark');
    expect(await background()).toBe('rgb(31, 26, 23)');
    await page.reload();
    expect(await shown()).toBe('dark');
    // The refused app scripts are the only failures: nothing else, such as the inline script refused by the page's policy.
    expect(problems.filter((problem) => !/net::ERR_FAILED|Failed to fetch dynamically imported module/.test(problem))).toEqual([]);
    expect(problems.join('\n')).not.toMatch(/Content Security Policy/);
    await context.close();
  });
});
