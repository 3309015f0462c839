/**
 * The llama-server engine's processes live and die with the companion: one per loaded model,
 * ended by a clean stop, by the kernel when the companion is killed outright, and swept by the
 * next companion on the same data folder if one was left behind anyway.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ServerStatus } from '#shared/api/admin.js';
import { ServerBuild } from '../../companion/src/inference/server/build-service.js';
import { sweepOrphans } from '../../companion/src/inference/server/process.js';
import { silentLogger } from '../../companion/src/logger.js';
import { tinyModelPath } from '../helpers/models.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { tempFolder } from '../helpers/temp.js';

const started: RunningServer[] = [];
afterAll(async () => {
  for (const server of started) await server.stop('SIGKILL');
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A companion on the server engine with the tiny model loaded; resolves with its llama-server pid. */
async function companionWithModel(): Promise<{ server: RunningServer; pid: number }> {
  const server = await startServer({ env: { HEARTH_ENGINE: 'server' } });
  started.push(server);
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tiny', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(response.status).toBe(200);
  const status = (await (await fetch(`${server.url}/admin/status`)).json()) as ServerStatus;
  expect(status.engine.build.state).toBe('ready');
  const [model] = status.loaded;
  expect(model).toMatchObject({ id: 'tiny', engine: 'server' });
  expect(alive(model!.process!.pid)).toBe(true);
  return { server, pid: model!.process!.pid };
}

describe('llama-server processes and the companion', () => {
  it('ends the process when the companion stops', async () => {
    const { server, pid } = await companionWithModel();
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(alive(pid)).toBe(false);
  });

  it('leaves no process behind when the companion is killed outright', async () => {
    const { server, pid } = await companionWithModel();
    await server.stop('SIGKILL');
    await expect.poll(() => alive(pid), { timeout: 30_000, interval: 100 }).toBe(false);
  });

  it('sweeps a process an earlier companion on the data folder left behind', async () => {
    const paths = new ServerBuild().ready()!;
    const runDir = tempFolder('engine-run');
    mkdirSync(runDir, { recursive: true });
    // A llama-server started without the companion's guard, as if its companion had died before the kernel could end it.
    const stray = spawn(paths.binary, ['-m', await tinyModelPath(), '--port', '0', '-ngl', '0', '--fit', 'off'], {
      cwd: paths.libraries.dir,
      env: { ...process.env, LD_LIBRARY_PATH: paths.libraries.dir },
      stdio: 'ignore',
      detached: true,
    });
    const exited = new Promise((resolve) => stray.once('exit', resolve));
    writeFileSync(join(runDir, `llama-server-${stray.pid}.pid`), paths.binary);
    // An unrelated process with a pid file is left alone.
    writeFileSync(join(runDir, `llama-server-${process.pid}.pid`), paths.binary);
    sweepOrphans(runDir, silentLogger);
    await exited;
    expect(alive(stray.pid!)).toBe(false);
    expect(alive(process.pid)).toBe(true);
  });
});
