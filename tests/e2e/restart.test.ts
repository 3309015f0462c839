import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RestartAnswer, ServerStatus } from '#shared/api/admin.js';
import type { ChannelStatus } from '#shared/api/remote.js';
import { registerAdminServer } from '../helpers/admin-fetch.js';
import { asOwner, testApp } from '../helpers/app.js';
import { cleanEnv, HEARTH_BIN, REPO_ROOT, untilListening, type Watched } from '../helpers/hearth-process.js';
import { freePort } from '../helpers/remote.js';
import { newDataDir, send, startServer, type RunningServer } from '../helpers/server.js';
import { openStream, sseData } from '../helpers/streams.js';
import { until } from '../helpers/until.js';

/*
 * POST /admin/restart on a real `hearth serve`: the companion stops as at Ctrl+C (an open stream
 * ends with the shutdown event) and answers again on the same port, from the same data folder,
 * with a setting that needed a restart (the secure channel) now in force; Ctrl+C on the
 * terminal's process group still stops it cleanly after one restart and after two.
 */

/** A fresh process loads the whole companion again: on a busy machine that takes a while. */
const RESTART_PATIENCE_MS = 90_000;

const started: RunningServer[] = [];
const groups: number[] = [];

afterEach(async () => {
  for (const group of groups.splice(0)) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  for (const server of started.splice(0)) await server.stop('SIGKILL');
});

async function status(url: string): Promise<ServerStatus | undefined> {
  try {
    const response = await fetch(`${url}/admin/status`);
    return response.ok ? ((await response.json()) as ServerStatus) : undefined;
  } catch {
    return undefined;
  }
}

/** Asks for a restart and waits until a companion started after it answers at `url`. */
async function restart(url: string): Promise<RestartAnswer> {
  const before = (await status(url))!.started_at!;
  const response = await send({ url }, '/admin/restart', { method: 'POST' });
  expect(response.status).toBe(202);
  const answer = (await response.json()) as RestartAnswer;
  expect(answer).toMatchObject({ restarting: true, url, started_at: before });
  await until(
    async () => {
      const now = await status(url);
      return now?.started_at && now.started_at !== before ? now : undefined;
    },
    `a restarted companion at ${url}`,
    RESTART_PATIENCE_MS,
  );
  return answer;
}

/**
 * Starts `command` with Hearth's flags (any port, `dataDir`, no external models) the way a
 * terminal does: the leader of a process group of its own (killed after the test); resolves once
 * it listens.
 */
async function startInTerminal(name: string, [command, ...args]: [string, ...string[]], dataDir: string): Promise<Watched> {
  const child = spawn(command, [...args, '--port', '0', '--data-dir', dataDir, '--no-external-models'], {
    cwd: REPO_ROOT,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  groups.push(child.pid!);
  const watched = await untilListening(child, name);
  registerAdminServer(watched.url, dataDir);
  return watched;
}

/** How a clean stop looks: exit code 0, no server.json left in the data folder, nothing answering at the address. */
const STOPPED_CLEANLY = { code: 0, serverFile: false, answering: false };

/** Ctrl+C on the terminal (SIGINT to the whole process group), and how it stopped. */
async function pressCtrlC(watched: Watched, dataDir: string): Promise<{ code: number | null; serverFile: boolean; answering: boolean }> {
  process.kill(-watched.process.pid!, 'SIGINT');
  const exit = await watched.exited;
  return { code: exit.code, serverFile: existsSync(join(dataDir, 'server.json')), answering: (await status(watched.url)) !== undefined };
}

describe('POST /admin/restart on hearth serve', () => {
  it(
    'answers again on the same port with the secure channel turned on, the same keys and stored responses, after ending an open stream',
    { timeout: 240_000 },
    async () => {
      const channelPort = await freePort();
      const dataDir = await newDataDir(true);
      writeFileSync(join(dataDir, 'config.yaml'), `version: 1\nserver:\n  remote: { enabled: false, host: 127.0.0.1, port: ${channelPort} }\n`);
      const server = await startServer({ dataDir });
      started.push(server);

      const key = (await (await send(server, '/admin/keys', { body: { label: 'kept' } })).json()) as { id: string; key: string };
      const stored = await send(server, '/v1/responses', { key: key.key, body: { model: 'tiny', input: 'Hello', max_output_tokens: 4, store: true } });
      expect(stored.status).toBe(200);
      const { id: responseId } = (await stored.json()) as { id: string };
      const applied = await send(server, '/admin/config/apply', {
        body: { document: { version: 1, server: { remote: { enabled: true } } }, confirm_high_risk: true },
      });
      expect(applied.status).toBe(200);
      expect(((await applied.json()) as { restart_required: string[] }).restart_required).toContain('server.remote.enabled');
      expect(((await (await send(server, '/admin/devices/channel')).json()) as ChannelStatus).listening).toBe(false);

      // A reply that never ends by itself, open while the restart is asked for.
      const stream = await openStream(
        `${server.url}/v1/chat/completions`,
        { model: 'tiny', stream: true, max_tokens: 1_000_000, messages: [{ role: 'user', content: 'Go on.' }] },
        (text) => text.split('"content":"').length >= 3,
      );
      const [, text] = await Promise.all([restart(server.url), stream.rest()]);
      const last = sseData(text)
        .filter((event) => event !== '[DONE]')
        .at(-1) as { error?: { code?: string } };
      expect(last.error?.code).toBe('server_busy');

      // The same port, a fresh process with the channel open, and the same data.
      const channel = (await (await send(server, '/admin/devices/channel')).json()) as ChannelStatus;
      expect(channel).toMatchObject({ enabled: true, listening: true, host: '127.0.0.1', port: channelPort });
      const keys = (await (await send(server, '/admin/keys')).json()) as { data: { id: string }[] };
      expect(keys.data.map((entry) => entry.id)).toContain(key.id);
      expect((await send(server, `/v1/responses/${responseId}`, { key: key.key })).status).toBe(200);
      expect(server.stdout().match(/Hearth listening on /g)).toHaveLength(2);
      expect(server.stderr()).toMatch(/Hearth started again/);

      // Stopped as before: the signal reaches the running server through the first process.
      expect(await server.stop('SIGTERM')).toBe(0);
      expect(existsSync(join(dataDir, 'server.json'))).toBe(false);
      expect(await status(server.url)).toBeUndefined();
    },
  );

  it('Ctrl+C on the terminal stops it cleanly after one restart and after two', { timeout: 480_000 }, async () => {
    const dataDir = await newDataDir(false);
    for (const restarts of [1, 2]) {
      const watched = await startInTerminal('hearth serve', [process.execPath, HEARTH_BIN, 'serve'], dataDir);
      for (let count = 0; count < restarts; count++) await restart(watched.url);
      expect({ restarts, ...(await pressCtrlC(watched, dataDir)) }).toEqual({ restarts, ...STOPPED_CLEANLY });
    }
  });
});

describe('POST /admin/restart under npm start', () => {
  it('restarts in the same terminal, and Ctrl+C then stops npm, the first process and the restarted one cleanly', { timeout: 480_000 }, async () => {
    const dataDir = await newDataDir(false);
    // npm leads the process group, and Ctrl+C reaches every process of it.
    const watched = await startInTerminal('npm start', ['npm', 'start', '--'], dataDir);
    await restart(watched.url);
    expect(watched.stdout().match(/Hearth listening on /g)).toHaveLength(2);
    expect(await pressCtrlC(watched, dataDir)).toEqual(STOPPED_CLEANLY);
  });
});

describe('POST /admin/restart where no hearth serve runs the companion', () => {
  it('answers restart_unavailable and keeps serving', async () => {
    const hearth = await testApp({ withModel: false });
    try {
      const response = await hearth.app.inject(asOwner({ method: 'POST', url: '/admin/restart' }));
      expect(response.statusCode).toBe(409);
      expect(response.json().error.code).toBe('restart_unavailable');
      expect((await hearth.app.inject(asOwner({ method: 'GET', url: '/admin/status' }))).json().started_at).toEqual(expect.any(String));
    } finally {
      await hearth.close();
    }
  });
});
