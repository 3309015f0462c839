/**
 * Which engine runs a model when the llama-server build is absent, being built or failed: with the
 * engine on auto, the in-process engine, with the reason in GET /admin/status; pinned to the
 * server, a clear refusal. The build's state is what its files in the cache say (here a fresh,
 * empty cache folder, and no CMake on the PATH, so no build starts).
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerStatus } from '#shared/api/admin.js';
import { serverBuildPaths, type ServerBuildPaths } from '../../companion/src/inference/server/build.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { tempFolder } from '../helpers/temp.js';

let server: RunningServer | undefined;

afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** A companion whose build cache is an empty folder and whose PATH has no build tools. */
async function companion(engine: string, prepare?: (paths: ServerBuildPaths) => void): Promise<RunningServer> {
  const cache = tempFolder('engine-cache');
  const env = { HEARTH_ENGINE: engine, HEARTH_ENGINE_CACHE: cache, PATH: '/nonexistent' };
  const paths = serverBuildPaths(env);
  if ('unavailable' in paths) throw new Error(paths.unavailable);
  prepare?.(paths);
  server = await startServer({ env });
  return server;
}

const status = async (url: string) => (await (await fetch(`${url}/admin/status`)).json()) as ServerStatus;

const chat = (url: string) =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tiny', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] }),
  });

function writeState(paths: ServerBuildPaths, state: object): void {
  mkdirSync(dirname(paths.state), { recursive: true });
  writeFileSync(paths.state, JSON.stringify(state));
}

describe('the engine when the llama-server build is not there', () => {
  it('runs models in process and says why when the build is absent and cannot be made', async () => {
    const { url } = await companion('auto');
    const before = await status(url);
    expect(before.engine.setting).toBe('auto');
    expect(before.engine.build).toMatchObject({ state: 'absent', reason: expect.stringMatching(/CMake/) });
    expect((await chat(url)).status).toBe(200);
    const [model] = (await status(url)).loaded;
    expect(model).toMatchObject({ id: 'tiny', engine: 'in-process' });
    expect(model!.engine_reason).toMatch(/llama-server cannot be built here: CMake/);
  });

  it('runs models in process while the build runs, with its progress as the reason', async () => {
    const { url } = await companion('auto', (paths) =>
      // A build in another live process (this test's), 40 % through.
      writeState(paths, { state: 'building', pid: process.pid, progress: 0.4, step: 'compiling (30 of 75 steps)', started_at: new Date().toISOString() }),
    );
    expect((await status(url)).engine.build).toMatchObject({ state: 'building', progress: 0.4 });
    expect((await chat(url)).status).toBe(200);
    expect((await status(url)).loaded[0]!.engine_reason).toMatch(
      /being built \(40 %, compiling \(30 of 75 steps\)\); the in-process engine runs models meanwhile/,
    );
  });

  it('runs models in process after a failed build, with its reason', async () => {
    const { url } = await companion('auto', (paths) =>
      writeState(paths, { state: 'failed', reason: 'the llama-server build failed: cmake exploded', failed_at: new Date().toISOString() }),
    );
    expect((await status(url)).engine.build).toMatchObject({ state: 'failed', reason: expect.stringMatching(/cmake exploded/) });
    expect((await chat(url)).status).toBe(200);
    expect((await status(url)).loaded[0]).toMatchObject({ engine: 'in-process', engine_reason: expect.stringMatching(/cmake exploded/) });
  });

  it('refuses clearly when pinned to the server engine', async () => {
    const { url } = await companion('server');
    const response = await chat(url);
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('model_load_failed');
    expect(body.error.message).toMatch(/tiny cannot run on the llama-server engine: llama-server cannot be built here: CMake/);
  });

  it('asks to retry when pinned to the server engine while it is being built', async () => {
    const { url } = await companion('server', (paths) =>
      writeState(paths, { state: 'building', pid: process.pid, progress: 0.1, step: 'configuring', started_at: new Date().toISOString() }),
    );
    const response = await chat(url);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('30');
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/waits for the llama-server engine: llama-server is being built/);
  });
});
