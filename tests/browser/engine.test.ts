/**
 * The Server screen says which engine runs each model and why, and how the llama-server build
 * stands: its progress while it is built, "ready" once it is. One companion whose build is under
 * way (a build state another live process, this test's, wrote into an empty cache; no build tools
 * on its PATH, so none starts), and one pinned to the llama-server engine on the real build (CI
 * builds it before the tests: `npm run engine:build`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverBuildPaths } from '../../companion/src/inference/server/build.js';
import { ServerBuild } from '../../companion/src/inference/server/build-service.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { tempFolder } from '../helpers/temp.js';
import { newSignInLink, signIn } from './app-helpers.js';
import { PHONE, SCHEMES, SIZES, launch, screenshot, watch } from './harness.js';

let building: RunningServer;
let onServer: RunningServer;
let browser: Browser;

beforeAll(async () => {
  if (!new ServerBuild().ready()) throw new Error('The llama-server build is not ready: run `npm run engine:build` first (CI does).');
  const cache = tempFolder('engine-cache');
  const env = { HEARTH_ENGINE: 'auto', HEARTH_ENGINE_CACHE: cache, PATH: '/nonexistent' };
  const paths = serverBuildPaths(env);
  if ('unavailable' in paths) throw new Error(paths.unavailable);
  mkdirSync(dirname(paths.state), { recursive: true });
  writeFileSync(
    paths.state,
    JSON.stringify({ state: 'building', pid: process.pid, progress: 0.4, step: 'compiling (32 of 79 steps)', started_at: new Date().toISOString() }),
  );
  // Independent starts, overlapped.
  [building, onServer, browser] = await Promise.all([startServer({ env }), startServer({ env: { HEARTH_ENGINE: 'server' } }), launch()]);
});

afterAll(async () => {
  await browser?.close();
  await building?.stop();
  await onServer?.stop();
});

async function serverPage(server: RunningServer, viewport: typeof PHONE, colorScheme: 'light' | 'dark'): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport, colorScheme, isMobile: viewport === PHONE, hasTouch: viewport === PHONE });
  const page = await context.newPage();
  const errors = watch(page);
  await signIn(page, await newSignInLink(server));
  await page.getByTestId('engine-build').waitFor();
  return { page, errors };
}

/** Loads the tiny model from the page, as a person does, and waits for its card. */
async function loadTiny(page: Page): Promise<void> {
  const loaded = page.getByLabel('tiny (loaded)');
  if (await loaded.count()) return;
  await page.getByRole('button', { name: 'Load tiny' }).click();
  await loaded.getByTestId('model-engine').waitFor();
}

/** Screenshots of the engine's build state and of the loaded model's engine line. */
async function screenshots(page: Page, prefix: string, look: string): Promise<void> {
  await page.getByTestId('engine-build').scrollIntoViewIfNeeded();
  await screenshot(page, `${prefix}-${look}`);
  await page.getByLabel('tiny (loaded)').getByTestId('model-engine').scrollIntoViewIfNeeded();
  await screenshot(page, `${prefix}-model-${look}`);
}

describe.each(SIZES.map(([name, viewport]) => ({ name, viewport })))('the Server screen at $name width', ({ name, viewport }) => {
  it.each(SCHEMES)('shows the build in progress and the in-process engine running the model meanwhile (%s)', async (colorScheme) => {
    const { page, errors } = await serverPage(building, viewport, colorScheme);
    await expect.poll(() => page.getByTestId('engine-setting').textContent()).toMatch(/Automatic: llama-server once it is built/);
    expect(await page.getByTestId('engine-build').textContent()).toMatch(/Building: compiling \(32 of 79 steps\) — 40 %/);
    expect(await page.getByRole('progressbar', { name: 'Building llama-server' }).getAttribute('value')).toBe('0.4');
    await loadTiny(page);
    const engine = page.getByLabel('tiny (loaded)').getByTestId('model-engine');
    expect(await engine.textContent()).toMatch(/Runs on the in-process engine, inside the companion\.\s*llama-server is being built \(40 %/);
    await screenshots(page, `server-engine-building`, `${name}-${colorScheme}`);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it.each(SCHEMES)('shows the build ready and llama-server running the model (%s)', async (colorScheme) => {
    const { page, errors } = await serverPage(onServer, viewport, colorScheme);
    expect(await page.getByTestId('engine-setting').textContent()).toMatch(/llama-server only/);
    expect(await page.getByTestId('engine-build').textContent()).toMatch(/Ready — built/);
    await loadTiny(page);
    const engine = page.getByLabel('tiny (loaded)').getByTestId('model-engine');
    expect(await engine.textContent()).toMatch(/Runs on llama-server, in its own process\.\s*The engine setting asks for the llama-server engine\./);
    await screenshots(page, `server-engine-ready`, `${name}-${colorScheme}`);
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
