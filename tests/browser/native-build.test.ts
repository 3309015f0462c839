/**
 * The native llama-server build on the Server screen, in real Chromium against a real `hearth
 * serve` on the real quick build: its progress while it runs (a build state this test's live
 * process wrote), and after a failure the reason, that the quick build stays in use, and Try
 * again, which runs the build once more (a stand-in build command that fails as a killed compiler
 * does: tests/fixtures/native-build.mjs). Screenshots light and dark, phone and desktop.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { serverBuildPaths } from '../../companion/src/inference/server/build.js';
import { ServerBuild } from '../../companion/src/inference/server/build-service.js';
import { nativeBuildPaths, type NativeBuildPaths } from '../../companion/src/inference/server/native.js';
import { startServer } from '../helpers/server.js';
import { tempFolder } from '../helpers/temp.js';
import { PICTURES, screenshot, sharedBrowserApp, SCHEMES, SIZES } from './harness.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/native-build.mjs', import.meta.url));
let control: string;
let env: Record<string, string>;
let native: NativeBuildPaths;

beforeAll(() => {
  if (!new ServerBuild().ready()) throw new Error('The llama-server build is not ready: run `npm run engine:build` first (CI does).');
});

const app = sharedBrowserApp({
  server: async () => {
    control = tempFolder('native-control');
    writeFileSync(join(control, 'fail'), '');
    env = {
      HEARTH_ENGINE: 'auto',
      HEARTH_NATIVE_CACHE: tempFolder('native-cache'),
      HEARTH_NATIVE_BUILD_COMMAND: `${JSON.stringify(process.execPath)} ${JSON.stringify(FIXTURE)}`,
      NATIVE_CONTROL: control,
    };
    const quick = serverBuildPaths({ ...process.env, ...env });
    if ('unavailable' in quick) throw new Error(quick.unavailable);
    native = nativeBuildPaths(quick, { ...process.env, ...env });
    // A build under way, by this test's own (live) process: the companion starts none of its own.
    mkdirSync(dirname(native.state), { recursive: true });
    writeFileSync(
      native.state,
      JSON.stringify({ state: 'building', pid: process.pid, progress: 0.4, step: 'compiling (40 of 100 steps)', started_at: new Date().toISOString() }),
    );
    return startServer({ env });
  },
});

const nativeLine = (page: Page) => page.getByTestId('engine-native');

async function openServer(viewport: { width: number; height: number }, colorScheme: 'light' | 'dark') {
  const opened = await app.open('/server', { viewport, colorScheme, isMobile: viewport.width < 500, signIn: true });
  await nativeLine(opened.page).waitFor();
  return opened;
}

describe('the native build on the Server screen', () => {
  describe.each(SIZES.map(([name, viewport]) => ({ name, viewport })))('at $name width', ({ name, viewport }) => {
    it.each(SCHEMES)('shows its progress while it runs (%s)', async (colorScheme) => {
      const { page, errors } = await openServer(viewport, colorScheme);
      expect(await nativeLine(page).textContent()).toMatch(/Building for this CPU: compiling \(40 of 100 steps\) — 40 %/);
      expect(await page.getByRole('progressbar', { name: 'Building llama-server for this CPU' }).getAttribute('value')).toBe('0.4');
      expect(await nativeLine(page).textContent()).toMatch(/models run on the quick build meanwhile/);
      await nativeLine(page).scrollIntoViewIfNeeded();
      await screenshot(page, `server-native-building-${name}-${colorScheme}`);
      expect(errors).toEqual([]);
      await page.context().close();
    });
  });

  it('after a failure says why and that the quick build stays in use, and Try again builds once more', async () => {
    writeFileSync(
      native.state,
      JSON.stringify({ state: 'failed', reason: 'the native llama-server build failed: CMake is not installed', failed_at: new Date().toISOString() }),
    );
    const { page, errors } = await openServer(SIZES[0]![1], 'light');
    const line = nativeLine(page);
    await expect.poll(() => line.textContent()).toMatch(/Failed \(.*\): the native llama-server build failed: CMake is not installed/);
    expect(await line.textContent()).toMatch(/Models keep running on the quick build/);

    await line.getByRole('button', { name: 'Try again' }).click();
    // The stand-in build fails as a killed compiler does: the page follows it to its new reason.
    await expect.poll(() => line.textContent(), { timeout: 90_000 }).toMatch(/Killed signal terminated program cc1plus/);
    expect(await line.getByRole('button', { name: 'Try again' }).isEnabled()).toBe(true);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it.skipIf(!PICTURES)('looks right after a failure', async () => {
    for (const colorScheme of SCHEMES)
      for (const [name, viewport] of SIZES) {
        const { page } = await openServer(viewport, colorScheme);
        await nativeLine(page).filter({ hasText: 'Failed' }).waitFor();
        await nativeLine(page).scrollIntoViewIfNeeded();
        await screenshot(page, `server-native-failed-${name}-${colorScheme}`);
        await page.context().close();
      }
  });
});
