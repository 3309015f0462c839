/**
 * The native llama-server build in the background, through the companion as it runs: a stand-in
 * build command (tests/fixtures/native-build.mjs, named by HEARTH_NATIVE_BUILD_COMMAND) prints
 * CMake-like progress lines and writes a copy of the quick binary as the native one. Its progress
 * shows in GET /admin/status; once ready, a model loads on it; a failed build keeps the quick build
 * in use with the reason, is not tried again when the companion starts again, and is on Try again.
 * Needs the quick llama-server build (the server-engine project's set-up makes it).
 */
import { existsSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { NativeBuildStatus, ServerStatus } from '#shared/api/admin.js';
import { asOwner, testApp, type TestApp } from '../../helpers/app.js';
import { tempFolder } from '../../helpers/temp.js';
import { until } from '../../helpers/until.js';

const FIXTURE = fileURLToPath(new URL('../../fixtures/native-build.mjs', import.meta.url));
/** The build is a separate `hearth` process started from the sources: its start may take a while on a busy machine. */
const BUILD_PATIENCE_MS = 90_000;

const apps: TestApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  vi.unstubAllEnvs();
});

/** A control folder for the stand-in build and a native cache of the test's own, in the environment the companion passes on. */
function standIn(): { control: string; runs: () => number } {
  const control = tempFolder('native-control');
  vi.stubEnv('HEARTH_NATIVE_CACHE', tempFolder('native-cache'));
  vi.stubEnv('HEARTH_NATIVE_BUILD_COMMAND', `${JSON.stringify(process.execPath)} ${JSON.stringify(FIXTURE)}`);
  vi.stubEnv('NATIVE_CONTROL', control);
  const runs = () => (existsSync(join(control, 'runs')) ? readFileSync(join(control, 'runs'), 'utf8').trim().split('\n').length : 0);
  return { control, runs };
}

/** The companion on a data folder (a new one unless given), and the messages it logged. */
async function start(dataDir?: string): Promise<{ app: TestApp; logged: string[] }> {
  const logged: string[] = [];
  const record = (object: object | string, message?: string) => void logged.push(message ?? String(object));
  const app = await testApp({ ...(dataDir ? { dataDir } : {}), log: { info: record, warn: record, error: record } });
  apps.push(app);
  return { app, logged };
}

const STARTED = /building llama-server natively/;

async function status(app: TestApp): Promise<ServerStatus> {
  const response = await app.app.inject(asOwner({ method: 'GET', url: '/admin/status' }));
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as ServerStatus;
}

/** Waits until the native build's state passes `check`, and returns it. */
function nativeState(app: TestApp, what: string, check: (native: NativeBuildStatus) => boolean): Promise<NativeBuildStatus> {
  return until(
    async () => {
      const native = (await status(app)).engine.native;
      return native && check(native) ? native : undefined;
    },
    what,
    BUILD_PATIENCE_MS,
  );
}

describe('the native llama-server build in the background', () => {
  it('reports its progress in /admin/status, and a model loaded once it is ready runs on it', async () => {
    const { control, runs } = standIn();
    const { app, logged } = await start();
    expect((await status(app)).engine.build.state).toBe('ready');
    expect(logged.some((line) => STARTED.test(line))).toBe(true);

    const building = await nativeState(app, 'the build at 40 %', (native) => native.build.state === 'building' && native.build.progress >= 0.4);
    expect(building.setting).toBe('auto');
    expect(building.build).toMatchObject({ state: 'building', step: 'compiling (40 of 100 steps)' });
    expect(building.build.state === 'building' && building.build.progress).toBeLessThan(1);

    writeFileSync(join(control, 'go'), '');
    const ready = await nativeState(app, 'the build ready', (native) => native.build.state === 'ready');
    expect(ready.build).toMatchObject({ state: 'ready' });
    expect(runs()).toBe(1);

    const load = await app.app.inject(asOwner({ method: 'POST', url: '/admin/models/tiny/load' }));
    expect(load.statusCode, load.body).toBe(200);
    const model = (await status(app)).loaded.find((entry) => entry.id === 'tiny');
    expect(model).toMatchObject({ engine: 'server', build: 'native' });
    // The process runs the native copy, not the quick build's binary.
    expect(readlinkSync(`/proc/${model!.process!.pid}/exe`).startsWith(process.env.HEARTH_NATIVE_CACHE!)).toBe(true);
  });

  it('keeps the quick build after a failed build, says why, does not try again at the next start, and tries again when asked', async () => {
    const { control, runs } = standIn();
    writeFileSync(join(control, 'fail'), '');
    const { app: first } = await start();
    const failed = await nativeState(first, 'the build failed', (native) => native.build.state === 'failed');
    expect(failed.build.state === 'failed' && failed.build.reason).toMatch(/native llama-server build failed: .*Killed signal terminated program cc1plus/s);
    expect((await status(first)).engine.build.state).toBe('ready');
    const load = await first.app.inject(asOwner({ method: 'POST', url: '/admin/models/tiny/load' }));
    expect(load.statusCode, load.body).toBe(200);
    expect((await status(first)).loaded.find((entry) => entry.id === 'tiny')).toMatchObject({ engine: 'server', build: 'prebuilt' });
    const dataDir = first.services.paths.root;
    apps.splice(apps.indexOf(first), 1);
    await first.close();

    // A new start finds the failure and leaves it: no build is started, the quick build stays in use.
    const { app: second, logged } = await start(dataDir);
    expect((await status(second)).engine.native?.build.state).toBe('failed');
    expect(logged.filter((line) => STARTED.test(line))).toEqual([]);
    expect(runs()).toBe(1);

    // Try again: the build runs once more, and this time it is made.
    rmSync(join(control, 'fail'));
    writeFileSync(join(control, 'go'), '');
    const retried = await second.app.inject(asOwner({ method: 'POST', url: '/admin/engine/native-build' }));
    expect(retried.statusCode, retried.body).toBe(200);
    expect((retried.json() as NativeBuildStatus).build.state).not.toBe('failed');
    await nativeState(second, 'the build ready after Try again', (native) => native.build.state === 'ready');
    expect(runs()).toBe(2);
  });
});
