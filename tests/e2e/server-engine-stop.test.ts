/**
 * `hearth serve` stopped (SIGTERM) while its model's llama-server process is not there to stop:
 * just killed and not yet started again (with no request running, and with a streamed reply
 * running), and still loading the model for the first request. Each time Hearth exits 0, a stream
 * ends with an error event, and no llama-server process it started is left: neither one it
 * reported (GET /admin/status) nor any other process whose command line names its data folder
 * (llama-server's model file, socket and slot folder are all there). Needs the llama-server build.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { ServerStatus } from '#shared/api/admin.js';
import { startServerWithSlowModel } from '../browser/slow-model.js';
import type { RunningServer } from '../helpers/server.js';
import { openStream, sseData } from '../helpers/streams.js';
import { until } from '../helpers/until.js';

const started: RunningServer[] = [];
afterAll(async () => {
  for (const server of started) await server.stop('SIGKILL');
});

/** `hearth serve` on the llama-server engine, with `tiny` and the slower `slow` in its models folder. */
async function companion(): Promise<RunningServer> {
  const server = await startServerWithSlowModel({ HEARTH_ENGINE: 'server' });
  started.push(server);
  return server;
}

/** Whether a process runs (a zombie has ended: only its exit status is left for its parent). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
  } catch {
    return false;
  }
}

/** The running processes, Hearth itself left out, whose command line names the server's data folder. */
function enginesOf(server: RunningServer): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === server.process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(server.dataDir) && alive(Number(entry))) found.push(Number(entry));
    } catch {
      // Ended while it was read.
    }
  }
  return found;
}

async function status(server: RunningServer): Promise<ServerStatus> {
  return (await (await fetch(`${server.url}/admin/status`)).json()) as ServerStatus;
}

/** The pid Hearth reports for a loaded model's llama-server process. */
async function reportedPid(server: RunningServer, model: string): Promise<number> {
  const loaded = (await status(server)).loaded.find((entry) => entry.id === model);
  expect(loaded).toMatchObject({ engine: 'server' });
  return loaded!.process!.pid;
}

/** Loads `model` with a short request; its llama-server pid. */
async function loaded(server: RunningServer, model: string): Promise<number> {
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 2, messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(response.status).toBe(200);
  const pid = await reportedPid(server, model);
  expect(alive(pid)).toBe(true);
  return pid;
}

/** The exit is waited for as long as the test may run: a stop that hangs fails the test by its timeout. */
async function expectCleanExit(server: RunningServer, pids: number[]): Promise<void> {
  expect(await server.stop('SIGTERM')).toBe(0);
  expect(pids.filter(alive)).toEqual([]);
  expect(enginesOf(server)).toEqual([]);
  expect(server.stderr()).not.toMatch(/stopping failed|unhandled|DisposedError/i);
}

/** An SSE text's last payload is an error, and it never says [DONE]. */
function expectErrorEnd(text: string): void {
  const payloads = sseData(text);
  expect(payloads).not.toContain('[DONE]');
  expect(payloads.at(-1)).toEqual({ error: expect.objectContaining({ code: expect.any(String), message: expect.any(String) }) });
}

/** A streamed request (for `slow` unless `model` says otherwise): its status and whole text once it ends. */
function reply(server: RunningServer, model = 'slow'): Promise<{ status: number; text: string }> {
  return fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, max_tokens: 1_000_000, messages: [{ role: 'user', content: 'Tell me everything.' }] }),
  }).then(async (response) => ({ status: response.status, text: await response.text() }));
}

/**
 * A request cut by the stop: refused with a 503 that says the server is shutting down, or, had
 * the model got ready just before the stop, a stream that ends with an error event.
 */
function expectRefusedOrCut(answer: { status: number; text: string }): void {
  if (answer.status === 200) return expectErrorEnd(answer.text);
  expect(answer.status).toBe(503);
  expect(JSON.parse(answer.text)).toEqual({ error: expect.objectContaining({ code: 'server_busy', message: expect.stringMatching(/shutting down/) }) });
}

/**
 * A companion whose `tiny` model's process was killed and is being started again: the pid killed
 * and the new one, found while Hearth still reports the killed one (it reports the new one once ready).
 */
async function restarting(): Promise<{ server: RunningServer; pid: number; next: number }> {
  const server = await companion();
  const pid = await loaded(server, 'tiny');
  process.kill(pid, 'SIGKILL');
  const next = await until(() => enginesOf(server).find((found) => found !== pid), 'the restarted llama-server process');
  return { server, pid, next };
}

/** A companion loading `slow` for its first request (its process found running): the request's answer to come, and the pid. */
async function loading(): Promise<{ server: RunningServer; first: Promise<{ status: number; text: string }>; pid: number }> {
  const server = await companion();
  const first = reply(server);
  const pid = await until(() => enginesOf(server)[0], 'the llama-server process loading the model');
  return { server, first, pid };
}

describe('hearth serve stopped while a llama-server process is not running', () => {
  it('exits 0 and leaves no process when stopped right after its idle model process was killed', async () => {
    const server = await companion();
    const pid = await loaded(server, 'tiny');
    process.kill(pid, 'SIGKILL');
    server.process.kill('SIGTERM');
    await expectCleanExit(server, [pid]);
  });

  it('exits 0 and leaves no process when stopped while the killed process is started again', async () => {
    const { server, pid, next } = await restarting();
    server.process.kill('SIGTERM');
    await expectCleanExit(server, [pid, next]);
  });

  it('ends a streamed reply with an error event, exits 0 and leaves no process when the process is killed mid-reply', async () => {
    const server = await companion();
    const stream = await openStream(
      `${server.url}/v1/chat/completions`,
      { model: 'slow', stream: true, max_tokens: 1_000_000, messages: [{ role: 'user', content: 'Tell me everything.' }] },
      (text) => text.split('"content":"').length > 4,
    );
    const pid = await reportedPid(server, 'slow');
    process.kill(pid, 'SIGKILL');
    server.process.kill('SIGTERM');
    expectErrorEnd(await stream.rest());
    await expectCleanExit(server, [pid]);
  });

  it('answers the first request 503, exits 0 and leaves no process when stopped while the model loads for it', async () => {
    const { server, first, pid } = await loading();
    const notReady = (await status(server)).loaded.length === 0;
    server.process.kill('SIGTERM');
    expectRefusedOrCut(await first);
    await expectCleanExit(server, [pid]);
    expect(notReady).toBe(true);
  });
});

/*
 * A load that does not end soon (a large model on a slow disk): the process is stopped (SIGSTOP),
 * so it never gets ready. Hearth must end it rather than wait for it.
 */
describe('hearth serve stopped while a llama-server process loads and does not get ready', () => {
  it('ends a first load: the request gets a 503, Hearth exits 0 and leaves no process', async () => {
    const { server, first, pid } = await loading();
    process.kill(pid, 'SIGSTOP');
    expect((await status(server)).loaded).toEqual([]);
    server.process.kill('SIGTERM');
    expectRefusedOrCut(await first);
    await expectCleanExit(server, [pid]);
  });

  it('ends the restart of a killed process: the request waiting for it gets a 503, Hearth exits 0 and leaves no process', async () => {
    const { server, pid, next } = await restarting();
    process.kill(next, 'SIGSTOP');
    // A request for the model holds a slot and waits for the restart.
    const waiting = reply(server, 'tiny');
    await until(async () => ((await status(server)).loaded.find((model) => model.id === 'tiny')?.busy === 1 ? true : undefined), 'the request waiting');
    server.process.kill('SIGTERM');
    expectRefusedOrCut(await waiting);
    await expectCleanExit(server, [pid, next]);
  });
});
