/**
 * The llama-server engine kept to the companion's user, and its lifecycle kept in the owner's
 * hands: the process listens on a Unix socket in a 0700 folder and has no TCP port, drops a request
 * that stalls, tells clients how it ended but keeps its log lines in the log; a process ended for
 * not answering is not counted as a crash, a model that failed loads again after a back-off and at
 * once on the owner's Load, Unload ends a load in progress, and threads are capped at the cores.
 * Needs the llama-server build (the `server-engine` project's global setup makes it).
 */
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { HearthError } from '../../../companion/src/errors.js';
import { Engine, type EngineOptions } from '../../../companion/src/inference/engine.js';
import { ServerBuild } from '../../../companion/src/inference/server/build-service.js';
import type { ServerModel } from '../../../companion/src/inference/server/model.js';
import { ServerProcess } from '../../../companion/src/inference/server/process.js';
import type { ModelFile } from '../../../companion/src/inference/types.js';
import { silentLogger } from '../../../companion/src/logger.js';
import { generationRequest, tinyModelPath } from '../../helpers/models.js';
import { tempFolder } from '../../helpers/temp.js';
import { serverEngineOptions } from '../../helpers/engine.js';

let model: ModelFile;
const engines: Engine[] = [];

function engine(extra: Partial<EngineOptions> = {}): Engine {
  const created = new Engine(serverEngineOptions(extra));
  engines.push(created);
  return created;
}

beforeAll(async () => {
  const path = await tinyModelPath();
  model = { id: 'tiny', path, sizeBytes: statSync(path).size, capabilities: ['chat', 'tools'] };
});

afterEach(() => {
  vi.useRealTimers();
});

afterAll(async () => {
  for (const created of engines) await created.close();
});

const ask = (text: string) => generationRequest('tiny', { text, maxTokens: 8, sampling: { seed: 5 } });
const pidOf = (subject: Engine) => subject.status()[0]?.process?.pid;

/** The TCP ports a process listens on: its socket inodes, found in the kernel's LISTEN tables. */
function listeningTcpPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]!);
    } catch {
      // Closed meanwhile.
    }
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    for (const row of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const fields = row.trim().split(/\s+/);
      if (fields[3] === '0A' && inodes.has(fields[9]!)) ports.push(parseInt(fields[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}

/** Its process is killed `times` times, each once its restart is up. */
async function crash(subject: Engine, times: number): Promise<void> {
  for (let time = 0; time < times; time++) {
    const server = subject.loadedModel('tiny') as ServerModel;
    await expect.poll(() => server.serverProcess.running).toBe(true);
    const pid = server.serverProcess.pid;
    server.serverProcess.kill();
    if (time < times - 1) await expect.poll(() => pidOf(subject) !== undefined && pidOf(subject) !== pid).toBe(true);
  }
  await expect.poll(() => subject.loadError(model)).toMatch(/keeps crashing/);
}

describe('the llama-server process', () => {
  it('listens only on a Unix socket in a folder of its own user', async () => {
    const subject = engine();
    await subject.run(model, ask('Hello'));
    const server = (subject.loadedModel('tiny') as ServerModel).serverProcess;
    expect(listeningTcpPorts(server.pid)).toEqual([]);
    expect(statSync(server.socket.path).isSocket()).toBe(true);
    expect(statSync(dirname(server.socket.path)).mode & 0o077).toBe(0);
  });

  it('drops a connection that sends half a request, and keeps answering', async () => {
    const server = await ServerProcess.start({
      paths: new ServerBuild().ready()!,
      gpu: false,
      args: ['-m', model.path, '-c', '512', '-np', '1', '-t', '1', '-ngl', '0', '--fit', 'off'],
      runDir: tempFolder('run'),
      log: silentLogger,
      ioTimeoutSeconds: 1,
    });
    try {
      const stalled = connect(server.socket.path);
      // Its headers cut off: the API key is checked only once they are read.
      stalled.write('POST /completion HTTP/1.1\r\nHost: x\r\nContent-Le');
      let answer = '';
      stalled.on('data', (piece: Buffer) => (answer += piece.toString()));
      await new Promise((resolve) => stalled.once('close', resolve));
      // It gave up on the request (llama.cpp's default is to wait an hour for the rest).
      expect(answer).not.toMatch(/^HTTP\/1\.1 2/);
      await expect(server.client.json('GET', '/health')).resolves.toMatchObject({ status: 'ok' });
    } finally {
      await server.stop();
    }
  });

  it('gives a plain reason when it cannot start, and keeps its log lines to the log', async () => {
    const lines: unknown[] = [];
    const log = { ...silentLogger, error: (fields: unknown) => lines.push(fields) } as typeof silentLogger;
    const missing = join(tempFolder('missing'), 'private-name.gguf');
    const failed = await ServerProcess.start({
      paths: new ServerBuild().ready()!,
      gpu: false,
      args: ['-m', missing, '-ngl', '0', '--fit', 'off'],
      runDir: tempFolder('run'),
      log,
    }).catch((error: unknown) => error as Error);
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).toMatch(/^llama-server exited with status \d+/);
    expect((failed as Error).message).not.toContain('private-name');
    expect(JSON.stringify(lines)).toContain('private-name');
  });
});

describe('the lifecycle of a model on llama-server', () => {
  it('is not failed by being ended three times for not answering', async () => {
    const subject = engine({ healthCheckMs: 300 });
    await subject.run(model, ask('warm up'));
    for (let time = 0; time < 3; time++) {
      const stuck = pidOf(subject)!;
      process.kill(stuck, 'SIGSTOP');
      await expect.poll(() => pidOf(subject) !== undefined && pidOf(subject) !== stuck).toBe(true);
    }
    expect(subject.loadError(model)).toBeUndefined();
    expect((await subject.run(model, ask('Still here?'))).completionTokens).toBe(8);
  });

  it("loads a model that kept crashing again on the owner's Load, and by itself after a back-off", async () => {
    const subject = engine();
    await subject.run(model, ask('warm up'));
    await crash(subject, 3);
    const refused = await subject.load(model).catch((error: unknown) => error);
    expect((refused as HearthError).code).toBe('model_load_failed');
    expect((refused as HearthError).message).not.toContain(model.path);
    await subject.load(model, { retry: true });
    expect((await subject.run(model, ask('Back?'))).completionTokens).toBe(8);

    await crash(subject, 3);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 61_000);
    expect((await subject.run(model, ask('Back again?'))).completionTokens).toBe(8);
  });

  it('ends a loading process when the model is unloaded', async () => {
    const runDir = tempFolder('engine-run');
    const subject = engine({ runDir });
    const loading = subject.load(model).catch((error: unknown) => error);
    const pidFile = () => readdirSync(runDir).find((file) => file.endsWith('.pid'));
    await expect.poll(pidFile, { interval: 5 }).toBeDefined();
    const pid = Number(/(\d+)/.exec(pidFile()!)![1]);
    // Stopped, it cannot finish loading: the load stays in progress until Unload ends it.
    process.kill(pid, 'SIGSTOP');
    expect(await subject.unload('tiny')).toBe(true);
    expect(await loading).toBeInstanceOf(HearthError);
    expect(existsSync(`/proc/${pid}`)).toBe(false);
    expect(subject.status()).toEqual([]);
  });

  it('runs no more threads than there are cores, whatever the settings ask', async () => {
    const subject = engine({ threads: 256, parallel: 64, contextSize: 1048576 });
    expect((await subject.run(model, ask('Hello'))).completionTokens).toBe(8);
    const status = subject.status()[0]!;
    expect(status.threads).toBeLessThanOrEqual(availableParallelism());
    expect(status.contextSize).toBeLessThanOrEqual(2048);
  });
});
