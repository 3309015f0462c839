/**
 * web-llm's real code path as far as this machine allows: without WebGPU the app says so;
 * with --enable-unsafe-webgpu (SwiftShader, no shader-f16) it reports the adapter, lists what
 * is cached (nothing), offers only the f32 models, and explains why a model cannot start.
 */
import { prebuiltAppConfig } from '@mlc-ai/web-llm';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../helpers/server.js';
import { launch, screenshot, watch } from './harness.js';

let server: RunningServer;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.stop();
});

async function modelsPage(browser: Browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  const page = await context.newPage();
  const errors = watch(page);
  await page.goto(`${server.url}/models`);
  const status = page.getByTestId('webgpu-status');
  await expect.poll(() => status.innerText(), { timeout: 30_000 }).not.toContain('checking');
  return { context, page, status, errors };
}

describe('web-llm without WebGPU', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('says WebGPU is not available and why, and offers no MLC download', async () => {
    const { page, status } = await modelsPage(browser);
    expect(await status.innerText()).toMatch(/WebGPU\s+not available/);
    const reason = await page.locator('[data-testid="webgpu-status"] + p.note').innerText();
    expect(reason).toMatch(/no GPU adapter|does not offer WebGPU/);
    expect(await page.getByLabel('Download a model for the graphics card').count()).toBe(0);
  });
});

describe('web-llm with --enable-unsafe-webgpu', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launch(['--enable-unsafe-webgpu']);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('reports the adapter, the missing shader-f16 and an empty cache', async () => {
    const { context, page, status, errors } = await modelsPage(browser);
    // The model list comes with the engine's answer; "none cached" means something only once it is there.
    const options = page.locator('#mlc-model option:not([value=""])');
    await expect.poll(() => options.count(), { timeout: 30_000 }).toBeGreaterThan(5);
    const text = await status.innerText();
    expect(text).toMatch(/WebGPU\s+available/);
    expect(text).toMatch(/Adapter\s+\S+/);
    expect(text).toMatch(/Half-precision support\s+no/);
    expect(text).toMatch(/Cached models\s+none/);
    expect(await page.locator('[data-testid="webgpu-status"] + p.note').innerText()).toContain('lacks half-precision support (shader-f16)');

    // Every f16 model is offered disabled; f32 ones can be chosen.
    const f16 = await page.locator('#mlc-model option[value*="q4f16"]').evaluateAll((nodes) => nodes.map((node) => (node as HTMLOptionElement).disabled));
    expect(f16.length).toBeGreaterThan(0);
    expect(f16.every(Boolean)).toBe(true);
    const f32 = await page.locator('#mlc-model option[value*="q4f32"]:not([disabled])').first().getAttribute('value');
    expect(f32).toBeTruthy();
    await screenshot(page, 'webgpu-status');

    // Starting a model that is not cached, with the network off, fails with a clear reason.
    await context.setOffline(true);
    await page.getByLabel('Download a model for the graphics card').selectOption(f32!);
    await page.getByRole('button', { name: 'Download and start' }).click();
    const error = page.getByTestId('prepare-error');
    await error.waitFor({ timeout: 60_000 });
    expect(await error.innerText()).toMatch(
      new RegExp(
        `^${f32!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} (is not stored in this browser and the network is off|could not be started: .*could not be downloaded)`,
      ),
    );
    await screenshot(page, 'webgpu-error');
    expect(errors.filter((error) => !/Failed to load resource|ERR_INTERNET_DISCONNECTED/.test(error))).toEqual([]);
    await context.close();
  });

  it('lists as cached exactly the models whose files are all in web-llm’s cache, with one look at the cache', async () => {
    const [whole, partial] = prebuiltAppConfig.model_list.filter((record) => /q4f32/.test(record.model_id) && !record.model_type).slice(0, 2);
    const base = (record: typeof whole) => `${record!.model.replace(/\/?$/, '/')}resolve/main/`;
    const { context, page, status } = await modelsPage(browser);
    // What web-llm writes when it has downloaded a model: the tensor list, then every shard it names.
    await page.evaluate(
      async ({ whole, partial }) => {
        const cache = await caches.open('webllm/model');
        const list = JSON.stringify({ records: [{ dataPath: 'params_shard_0.bin' }, { dataPath: 'params_shard_1.bin' }] });
        for (const url of [whole, partial]) await cache.put(new URL('tensor-cache.json', url).href, new Response(list));
        for (const shard of ['params_shard_0.bin', 'params_shard_1.bin']) await cache.put(new URL(shard, whole).href, new Response('weights'));
        // The partial download lacks its second shard.
        await cache.put(new URL('params_shard_0.bin', partial).href, new Response('weights'));
      },
      { whole: base(whole), partial: base(partial) },
    );
    await page.reload();
    await expect.poll(() => status.innerText(), { timeout: 30_000 }).toMatch(new RegExp(`Cached models\\s+${whole!.model_id}`));
    expect(await status.innerText()).not.toContain(partial!.model_id);
    // The cached one is offered to use, not to download; the partial one is still offered for download.
    const card = page.getByRole('listitem', { name: whole!.model_id, exact: true });
    expect(await card.getByRole('button', { name: 'Use in chat' }).count()).toBe(1);
    expect(await page.getByRole('listitem', { name: partial!.model_id, exact: true }).count()).toBe(0);
    expect(await page.locator(`#mlc-model option[value="${whole!.model_id}"]`).count()).toBe(0);
    expect(await page.locator(`#mlc-model option[value="${partial!.model_id}"]`).count()).toBe(1);
    await context.close();
  });
});
