import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HealthStatus } from '#shared/api/openai.js';
import { runHearth } from '../helpers/hearth-cli.js';
import { newDataDir, send, startServer, type RunningServer } from '../helpers/server.js';
import { tempFolder } from '../helpers/temp.js';
import { until, untilTrue } from '../helpers/until.js';

/*
 * A data folder deleted or moved away while a real `hearth serve` runs: /health says so within
 * seconds, every change is refused in each protocol's error shape, the log says what happened and
 * what to do, and `hearth open` still signs the app in. The same folder put back: Hearth carries on.
 */

const running: RunningServer[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop('SIGKILL')));
});

async function start(): Promise<RunningServer> {
  const server = await startServer({ dataDir: await newDataDir(false) });
  running.push(server);
  return server;
}

async function health(server: RunningServer): Promise<{ status: number; body: HealthStatus }> {
  const response = await fetch(`${server.url}/health`);
  return { status: response.status, body: (await response.json()) as HealthStatus };
}

const untilHealth = (server: RunningServer, status: number) =>
  until(async () => {
    const answer = await health(server);
    return answer.status === status ? answer : undefined;
  }, `/health to answer ${status}`);

/** A request that changes something: a chat completion (OpenAI's shape) for a model that does not exist. */
const chat = (server: RunningServer) => send(server, '/v1/chat/completions', { body: { model: 'absent', messages: [{ role: 'user', content: 'Hi' }] } });

describe('the data folder deleted while Hearth runs', () => {
  it('is reported by /health, refuses writes with data_folder_gone, logs one error line, and hearth open still prints a link', async () => {
    const server = await start();
    expect(await health(server)).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect((await chat(server)).status).toBe(404);

    rmSync(server.dataDir, { recursive: true, force: true });

    const { body } = await untilHealth(server, 503);
    expect(body).toMatchObject({ status: 'error', error: { code: 'data_folder_gone', type: 'server_error' } });
    expect(body.error?.message).toMatch(/deleted or moved while Hearth was running/);
    expect(body.version).toEqual(expect.any(String));

    // A write in OpenAI's shape, and in Anthropic's on its own route.
    const refused = await chat(server);
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'data_folder_gone',
      message: expect.stringMatching(/Put it back, or restart Hearth to start with a new one/),
    });
    const anthropic = await send(server, '/v1/messages', { body: { model: 'absent', max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] } });
    expect(anthropic.status).toBe(503);
    expect(await anthropic.json()).toMatchObject({ type: 'error', error: { message: expect.stringMatching(/deleted or moved/) } });
    // Reads still answer.
    expect((await send(server, '/v1/models')).status).toBe(200);

    // One loud line in the log: what happened and what to do.
    await untilTrue(() => /was deleted or moved while Hearth was running/.test(server.stderr()), 'the log line');
    expect(server.stderr().match(/was deleted or moved while Hearth was running/g)).toHaveLength(1);
    expect(server.stderr()).toMatch(/put the folder back where it was.*or restart Hearth to start with a new one/);

    // The commands still find the server: a folder with what they need was made again.
    await untilTrue(() => existsSync(join(server.dataDir, 'server.json')), 'server.json made again');
    expect(JSON.parse(readFileSync(join(server.dataDir, 'server.json'), 'utf8'))).toMatchObject({ pid: server.process.pid, url: server.url });
    const opened = await runHearth(['open', '--data-dir', server.dataDir]);
    expect(opened.code, opened.stderr).toBe(0);
    expect(opened.stdout.trim()).toMatch(new RegExp(`^${server.url}/.*#`));
    // Still the same server: it keeps saying so.
    expect((await health(server)).status).toBe(503);
  });

  it('moved away and put back: Hearth carries on saving', async () => {
    const server = await start();
    const aside = join(tempFolder('aside'), 'moved');
    renameSync(server.dataDir, aside);
    await untilHealth(server, 503);
    expect((await chat(server)).status).toBe(503);
    // Hearth made a nearly empty folder in its place for the commands; the person puts theirs back instead.
    await untilTrue(() => existsSync(join(server.dataDir, 'server.json')), 'the folder made again');
    rmSync(server.dataDir, { recursive: true, force: true });
    renameSync(aside, server.dataDir);

    expect((await untilHealth(server, 200)).body.status).toBe('ok');
    expect((await chat(server)).status).toBe(404);
    await untilTrue(() => /is back in its place/.test(server.stderr()), 'the log line saying it is back');
  });
});
