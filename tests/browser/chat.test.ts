/**
 * The app against a real `hearth serve` on the tiny model, in real Chromium: install facts,
 * streaming, stop, history across reloads, conversation management, safe Markdown.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startServerWithSlowModel } from './slow-model.js';
import { adminStatus, chooseModel, lastReply, replyEnds, replyStarts, send, setSetting, storedConversations } from './app-helpers.js';
import { CHROMIUM, DESKTOP, FLAGS, screenshot, sharedBrowserApp, waitForServiceWorker, watch } from './harness.js';

// Signed in through a fresh link, as a person would: the server page needs it.
const app = sharedBrowserApp({ server: startServerWithSlowModel, page: { colorScheme: 'light', signIn: true } });

/** Width and height from a PNG's IHDR chunk. */
function pngSize(bytes: Buffer): { width: number; height: number } {
  expect(bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

describe('the installable app', () => {
  it('is served by the companion with a manifest, real icons and a service worker controlling the page', async () => {
    await expect.poll(() => app.page.getByRole('link', { name: 'Hearth' }).isVisible()).toBe(true);
    const manifestHref = await app.page.locator('link[rel="manifest"]').getAttribute('href');
    const manifest = (await (await fetch(new URL(manifestHref!, app.server.url))).json()) as {
      display: string;
      start_url: string;
      theme_color: string;
      background_color: string;
      icons: { src: string; sizes: string; purpose?: string; type: string }[];
    };
    expect(manifest).toMatchObject({ display: 'standalone', start_url: '/' });
    expect(manifest.theme_color).toMatch(/^#/);
    expect(manifest.background_color).toMatch(/^#/);
    expect(manifest.icons.some((icon) => icon.purpose === 'maskable')).toBe(true);
    for (const icon of manifest.icons) {
      const response = await fetch(new URL(icon.src, app.server.url));
      expect(response.headers.get('content-type')).toBe('image/png');
      const [width, height] = icon.sizes.split('x').map(Number);
      expect(pngSize(Buffer.from(await response.arrayBuffer()))).toEqual({ width, height });
    }
    expect(manifest.icons.map((icon) => icon.sizes)).toEqual(expect.arrayContaining(['192x192', '512x512']));

    await waitForServiceWorker(app.page);
    const worker = await app.page.evaluate(async () => {
      const registration = await navigator.serviceWorker.getRegistration();
      return { scope: registration?.scope, script: navigator.serviceWorker.controller?.scriptURL };
    });
    expect(worker).toEqual({ scope: `${app.server.url}/`, script: `${app.server.url}/sw.js` });
    await expect.poll(() => app.page.getAttribute('.status', 'data-status')).toBe('connected');
  });

  it("is installable by Chromium's own checks", async () => {
    // Incognito contexts are never installable, so this one uses a profile on disk.
    const profile = mkdtempSync(join(tmpdir(), 'hearth-profile-'));
    const persistent = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: FLAGS, viewport: DESKTOP });
    try {
      const installPage = persistent.pages()[0] ?? (await persistent.newPage());
      await installPage.goto(app.server.url);
      await waitForServiceWorker(installPage);
      const cdp = await persistent.newCDPSession(installPage);
      const { installabilityErrors } = (await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: { errorId: string }[] };
      expect(installabilityErrors).toEqual([]);
      const { url, data } = (await cdp.send('Page.getAppManifest')) as { url: string; data: string };
      expect(url).toBe(`${app.server.url}/manifest.webmanifest`);
      expect(JSON.parse(data)).toMatchObject({ name: 'Hearth', display: 'standalone' });
    } finally {
      await persistent.close();
      rmSync(profile, { recursive: true, force: true });
    }
  });
});

describe('chat with a companion model', () => {
  it('streams a reply into the page and shows token usage and speed', async () => {
    // The slow model (about 150 tokens/s on one core): the page shows a streaming reply at most ten
    // times a second, so the reply must last long enough for several of them.
    await chooseModel(app.page, 'companion:slow');
    await setSetting(app.page, 'Max tokens', '160');
    // Record every length the reply's text goes through while it streams.
    await app.page.evaluate(() => {
      const lengths: number[] = [];
      (window as unknown as { lengths: number[] }).lengths = lengths;
      new MutationObserver(() => {
        const replies = document.querySelectorAll('article[data-role="assistant"] .markdown');
        const text = replies[replies.length - 1]?.textContent ?? '';
        if (lengths.at(-1) !== text.length) lengths.push(text.length);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await send(app.page, 'Hello, who are you?');

    const text = await replyEnds(app.page);
    expect(text.length).toBeGreaterThan(0);
    const lengths = await app.page.evaluate(() => (window as unknown as { lengths: number[] }).lengths);
    expect(new Set(lengths.filter((length) => length > 0)).size).toBeGreaterThan(2);
    const stats = await lastReply(app.page).getByTestId('stats').innerText();
    expect(stats).toMatch(/^160 tokens · \d+ prompt · [\d.]+ tok\/s · [\d.]+ s$/);
    await expect.poll(() => app.page.locator('nav[aria-label="Conversations"] li').count()).toBe(1);
    await screenshot(app.page, 'chat-desktop-light');
  });

  it('stops a reply: the text so far stays, the companion stops generating', async () => {
    const generated = async () => (await adminStatus(app.server.url)).loaded.find((model) => model.id === 'slow')?.generated_tokens ?? 0;
    await chooseModel(app.page, 'companion:slow');
    await setSetting(app.page, 'Max tokens', '1800');
    const before = await generated();
    await send(app.page, 'Tell me a long story.');
    await replyStarts(app.page);
    await app.page.getByRole('button', { name: 'Stop' }).click();

    const text = await replyEnds(app.page, 'stopped');
    expect(text.length).toBeGreaterThan(0);
    await expect.poll(async () => (await adminStatus(app.server.url)).loaded.find((model) => model.id === 'slow')?.busy, { timeout: 10_000 }).toBe(0);
    const after = await generated();
    expect(after - before).toBeLessThan(1800);
    // A later reply of the same model: once it is counted, the stopped one had its chance to go
    // on, and the count holds that reply's tokens alone.
    const later = await fetch(`${app.server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow', messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 4 }),
    });
    expect(later.status).toBe(200);
    const { usage } = (await later.json()) as { usage: { completion_tokens: number } };
    expect(usage.completion_tokens).toBeGreaterThan(0);
    await expect.poll(generated).toBe(after + usage.completion_tokens);
    await expect(lastReply(app.page).getByText('Stopped').isVisible()).resolves.toBe(true);
    // The composer is usable again.
    await expect(app.page.getByRole('button', { name: 'Send' }).isVisible()).resolves.toBe(true);
    await chooseModel(app.page, 'companion:tiny');
  });

  it('copies a reply to the clipboard', async () => {
    await app.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.server.url });
    const reply = lastReply(app.page);
    await reply.getByRole('button', { name: 'Copy reply' }).click();
    await reply.getByRole('button', { name: 'Copy reply' }).getByText('Copied').waitFor();
    // The copy is the reply's markdown source, as the conversation keeps it (not the rendered text).
    const latest = (await storedConversations(app.page)).sort((a, b) => b.updatedAt - a.updatedAt)[0]!;
    const stored = latest.messages.filter((message) => message.role === 'assistant').at(-1)!.content;
    expect(stored.length).toBeGreaterThan(0);
    expect(await app.page.evaluate(() => navigator.clipboard.readText())).toBe(stored);
  });

  it('regenerates the last reply', async () => {
    await setSetting(app.page, 'Max tokens', '16');
    const count = await app.page.locator('article[data-role="assistant"]').count();
    await lastReply(app.page).getByRole('button', { name: 'Regenerate reply' }).click();
    const text = await replyEnds(app.page, 'done');
    expect(text.length).toBeGreaterThan(0);
    expect(await app.page.locator('article[data-role="assistant"]').count()).toBe(count);
    expect(await lastReply(app.page).getByTestId('stats').innerText()).toMatch(/^16 tokens/);
  });

  it('keeps conversations across a reload, and renames, searches and deletes them', async () => {
    await app.page.getByRole('button', { name: 'New conversation' }).click();
    await send(app.page, 'A second conversation about apples');
    await replyEnds(app.page, 'done');
    await app.page.reload();
    const list = app.page.locator('nav[aria-label="Conversations"]');
    await expect.poll(() => list.locator('.title').allInnerTexts()).toEqual(['A second conversation about apples', 'Hello, who are you?']);

    await list.locator('button.open', { hasText: 'Hello, who are you?' }).click();
    await expect.poll(() => app.page.locator('article[data-role="user"]').count()).toBe(2);

    // Row actions live in a menu, not on every row.
    await list.getByRole('button', { name: 'Actions for Hello, who are you?' }).click();
    await list.getByRole('menuitem', { name: 'Rename' }).click();
    await app.page.getByLabel('New title').fill('Greetings');
    await app.page.getByLabel('New title').press('Enter');
    await app.page.getByLabel('Search conversations').fill('apples');
    await expect.poll(() => list.locator('.title').allInnerTexts()).toEqual(['A second conversation about apples']);
    await app.page.getByLabel('Search conversations').fill('long story');
    await expect.poll(() => list.locator('.title').allInnerTexts()).toEqual(['Greetings']);
    await app.page.getByLabel('Search conversations').fill('');

    await list.getByRole('button', { name: 'Actions for A second conversation about apples' }).click();
    await list.getByRole('menuitem', { name: 'Delete' }).click();
    // The confirmation takes the focus on "Keep"; Delete must be chosen on purpose.
    expect(await app.page.evaluate(() => document.activeElement?.textContent)).toBe('Keep');
    await list.getByRole('button', { name: 'Delete', exact: true }).click();
    // The row goes once the deletion is stored (a reload in the same instant could abort it); then it stays gone.
    await expect.poll(() => list.locator('.title').allInnerTexts()).toEqual(['Greetings']);
    await app.page.reload();
    await expect.poll(() => list.locator('.title').allInnerTexts()).toEqual(['Greetings']);
  });

  it('keeps what was typed but not sent across a reload', async () => {
    await app.page.getByLabel('Message', { exact: true }).fill('half a thought');
    // Reload once the draft is stored, not after some time.
    await expect.poll(() => app.page.evaluate(() => localStorage.getItem('hearth.drafts') ?? '')).toContain('half a thought');
    await app.page.reload();
    await expect.poll(() => app.page.getByLabel('Message', { exact: true }).inputValue()).toBe('half a thought');
    await app.page.getByLabel('Message', { exact: true }).fill('');
  });

  it('reports no page errors', () => {
    expect(app.errors).toEqual([]);
  });
});

describe('the server page', () => {
  it('shows the address, port and model folders, and loads and unloads a model', async () => {
    await app.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Server' }).click();
    const port = new URL(app.server.url).port;
    await expect.poll(() => app.page.getByTestId('server-port').innerText()).toBe(port);
    expect(await app.page.getByTestId('server-address').innerText()).toBe(app.server.url);
    expect(await app.page.getByTestId('models-dirs').innerText()).toContain(`${app.server.dataDir}/models`);

    // tiny and slow were loaded by the chats above: each has a card among the loaded models.
    const card = (id: string) => app.page.getByRole('listitem', { name: `${id} (loaded)`, exact: true });
    const loaded = async () => (await adminStatus(app.server.url)).loaded.map((model) => model.id).sort();
    await card('tiny').waitFor();
    expect(await loaded()).toEqual(['slow', 'tiny']);
    await card('tiny').getByRole('button', { name: 'Unload tiny' }).click();
    await expect.poll(loaded).toEqual(['slow']);
    await card('tiny').waitFor({ state: 'detached' });
    await app.page.getByRole('listitem', { name: 'tiny', exact: true }).getByText('not loaded').waitFor();

    await card('slow').getByRole('button', { name: 'Unload slow' }).click();
    await app.page.getByText('No model is loaded.').waitFor();
    expect(await loaded()).toEqual([]);

    await app.page.getByRole('button', { name: 'Load tiny' }).click();
    await card('tiny').waitFor();
    expect(await loaded()).toEqual(['tiny']);
    await screenshot(app.page, 'server-desktop-loaded');
  });
});

describe('replies are safe Markdown', () => {
  it('renders code and lists, and neither runs nor renders HTML from a reply', async () => {
    // A reply crafted to attack the page, delivered as the companion's SSE stream would be.
    const reply = [
      'Here is **bold**, a list and code:\n\n- one\n- two\n\n```js\nconst x = 1 < 2;\n```\n\n',
      '<img src=x onerror="window.__pwned = 1">',
      '<script>window.__pwned = 2</script>',
      '\n\n[link](javascript:window.__pwned=3) ![pic](http://example.invalid/p.png)',
    ];
    const chunks = reply.map(
      (content) =>
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'tiny', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`,
    );
    const safe = await app.browser.newContext({ viewport: DESKTOP, serviceWorkers: 'block' });
    const attacked = await safe.newPage();
    const attackedErrors = watch(attacked);
    await attacked.route('**/v1/chat/completions', (route) =>
      route.fulfill({ status: 200, contentType: 'text/event-stream', body: `${chunks.join('')}data: [DONE]\n\n` }),
    );
    await attacked.goto(app.server.url);
    await chooseModel(attacked, 'companion:tiny');
    await send(attacked, 'attack');
    await replyEnds(attacked, 'done');
    const article = lastReply(attacked);

    expect(await article.locator('.markdown strong').innerText()).toBe('bold');
    expect(await article.locator('.markdown li').allInnerTexts()).toEqual(['one', 'two']);
    expect((await article.locator('.markdown pre code').innerText()).trim()).toBe('const x = 1 < 2;');
    expect(await article.locator('img, script, iframe').count()).toBe(0);
    const text = await article.locator('.markdown').innerText();
    expect(text).toContain('<img src=x onerror="window.__pwned = 1">');
    expect(text).toContain('<script>window.__pwned = 2</script>');
    // The javascript: URL is dropped; the image became a plain link (nothing is fetched).
    expect(await article.locator('.markdown a', { hasText: /^link$/ }).getAttribute('href')).toBeNull();
    expect(await article.locator('.markdown a', { hasText: 'pic' }).getAttribute('href')).toBe('http://example.invalid/p.png');
    // A broken image of our own: once its error has fired, the reply's (had it been rendered) had its chance.
    await attacked.evaluate(() => {
      const probe = new Image();
      probe.onerror = () => ((window as unknown as { __probed?: boolean }).__probed = true);
      probe.src = '/x';
    });
    await attacked.waitForFunction(() => (window as unknown as { __probed?: boolean }).__probed === true);
    expect(await attacked.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(attackedErrors).toEqual([]);
    await safe.close();
  });
});
