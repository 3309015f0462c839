import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerStatus } from '#shared/api/admin.js';
import type { ModelList } from '#shared/api/openai.js';
import { cleanEnv, HEARTH_BIN, REPO_ROOT, runNode, spawnListening, START_SCRIPT, type Listening } from '../helpers/hearth-process.js';
import { closedPort } from '../helpers/mock-provider.js';
import { tinyModelPath } from '../helpers/models.js';
import { newDataDir, send, sharedServer, startServer, type RunningServer } from '../helpers/server.js';
import { tempFolder } from '../helpers/temp.js';
import { untilTrue } from '../helpers/until.js';

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** Every process a test started, stopped afterwards even when the test failed. */
const running: (RunningServer | Listening)[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop('SIGKILL')));
});

/**
 * Two servers the tests never stop, one start each for the file instead of one per test; stopped
 * after the last test, each must exit 0. `served` has the tiny model and is only looked at (its
 * lock, its models, its port). `idle` starts without models: the no-models test reads its first
 * output and is the one test that changes it (it copies a model in, last); the others look only
 * at its port and its data folder.
 */
const served = sharedServer();
const idle = sharedServer({ withModel: false });

async function start(options: Parameters<typeof startServer>[0] = {}): Promise<RunningServer> {
  const server = await startServer(options);
  running.push(server);
  return server;
}

async function json<T>(url: string): Promise<T> {
  const response = await fetch(url);
  expect(response.status, url).toBe(200);
  return (await response.json()) as T;
}

async function modelIds(url: string): Promise<string[]> {
  return (await json<ModelList>(`${url}/v1/models`)).data.map((model) => model.id);
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  await untilTrue(check, what);
}

const serveArgs = (dataDir: string) => ['serve', '--port', '0', '--data-dir', dataDir, '--no-external-models'];

describe('one server per data directory', () => {
  it('a second server on the same data directory says where the first runs and exits 0, while the first keeps serving', async () => {
    const first = served.server;
    const lock = join(first.dataDir, 'hearth.lock');
    expect(readFileSync(lock, 'utf8').split(' ')[0]).toBe(String(first.process.pid));

    const second = await runNode(HEARTH_BIN, serveArgs(first.dataDir));
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe(`Hearth is already running at ${first.url}\n`);
    // Started without a terminal: no browser, and no live link in what may be a log.
    expect(second.stderr).toContain(`To sign the app in, run npm run hearth -- open --data-dir ${first.dataDir} on this machine`);
    expect(second.stdout).not.toMatch(/listening/);

    // The refused start neither took nor removed the lock, and the first server still answers.
    expect(readFileSync(lock, 'utf8').split(' ')[0]).toBe(String(first.process.pid));
    expect((await json<{ status: string }>(`${first.url}/health`)).status).toBe('ok');
    expect(await modelIds(first.url)).toContain('tiny');
    expect(first.process.exitCode).toBeNull();
  });

  it('SIGINT exits 0 and removes the lock file; a second start afterwards works', async () => {
    const first = await start();
    const lock = join(first.dataDir, 'hearth.lock');
    // Load the model so shutdown has something to release.
    const chat = await send(first, '/v1/chat/completions', { body: { model: 'tiny', max_tokens: 2, messages: [{ role: 'user', content: 'Hi' }] } });
    expect(chat.status).toBe(200);
    expect(existsSync(lock)).toBe(true);
    expect(await first.stop('SIGINT')).toBe(0);
    expect(existsSync(lock)).toBe(false);

    const again = await start({ dataDir: first.dataDir });
    expect(readFileSync(lock, 'utf8').split(' ')[0]).toBe(String(again.process.pid));
    expect(await modelIds(again.url)).toContain('tiny');
    expect(await again.stop('SIGINT')).toBe(0);
    expect(existsSync(lock)).toBe(false);
  });

  it('SIGTERM exits 0 and removes the lock file, even with a stream open; a second start afterwards works', async () => {
    const first = await start();
    const lock = join(first.dataDir, 'hearth.lock');
    const response = await send(first, '/v1/chat/completions', {
      body: { model: 'tiny', stream: true, max_tokens: 1_000_000, messages: [{ role: 'user', content: 'Go on forever' }] },
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    expect(await first.stop('SIGTERM')).toBe(0);
    expect(existsSync(lock)).toBe(false);
    // The open stream ends (cleanly or by reset) rather than hanging.
    await reader
      .read()
      .then(async function drain(result): Promise<void> {
        if (!result.done) return reader.read().then(drain);
      })
      .catch(() => undefined);

    const again = await start({ dataDir: first.dataDir });
    expect((await json<{ status: string }>(`${again.url}/health`)).status).toBe('ok');
    expect(await modelIds(again.url)).toContain('tiny');
    expect(await again.stop('SIGTERM')).toBe(0);
    expect(existsSync(lock)).toBe(false);
  });

  it('a signal sent as soon as the address is printed still shuts down cleanly (exit 0, lock removed)', async () => {
    // Scripts read the address line and may stop the server at once; that must not skip the shutdown.
    // Four servers of their own data directories, started at once; each is signalled as soon as it prints its address.
    const outcomes = await Promise.all(
      (['SIGTERM', 'SIGINT', 'SIGTERM', 'SIGINT'] as const).map(async (signal) => {
        const dataDir = await newDataDir(false);
        const server = await spawnListening(HEARTH_BIN, serveArgs(dataDir));
        running.push(server);
        const { code, signal: killedBy } = await server.stop(signal);
        return `${signal}: exit ${code ?? `by ${killedBy}`}, lock ${existsSync(join(dataDir, 'hearth.lock')) ? 'left behind' : 'removed'}`;
      }),
    );
    expect(outcomes).toEqual(['SIGTERM', 'SIGINT', 'SIGTERM', 'SIGINT'].map((signal) => `${signal}: exit 0, lock removed`));
  });

  it('--port 0 gives each server a free port of its own', async () => {
    // Two servers running side by side, each started with --port 0.
    const a = idle.server;
    const b = served.server;
    const portA = Number(new URL(a.url).port);
    const portB = Number(new URL(b.url).port);
    expect(portA).toBeGreaterThan(0);
    expect(portB).toBeGreaterThan(0);
    expect(portA).not.toBe(portB);
    expect(new URL(a.url).hostname).toBe('127.0.0.1');
    const statusA = await json<ServerStatus>(`${a.url}/admin/status`);
    expect(statusA.address).toEqual({ host: '127.0.0.1', port: portA });
    expect((await json<ServerStatus>(`${b.url}/admin/status`)).data_dir).toBe(b.dataDir);
  });
});

describe('starting without models', () => {
  it('still starts, lists no models and names every way to get one on stderr', async () => {
    const { server } = idle;
    expect(server.stdout()).toMatch(/^Hearth listening on http:\/\/127\.0\.0\.1:\d+\n$/);
    expect(await json<ModelList>(`${server.url}/v1/models`)).toEqual({ object: 'list', data: [] });
    await waitFor(() => /No models yet/.test(server.stderr()), 'the no-models hint on stderr');
    const hint = server.stderr();
    expect(hint).toContain('Models → Discover');
    expect(hint).toContain(`copy a .gguf file into ${join(server.dataDir, 'models')}`);
    // This server runs with --no-external-models: the hint says that other apps' folders are not searched.
    expect(hint).toMatch(/models of LM Studio, Ollama, the Hugging Face cache and llama\.cpp are not listed: that is turned off/);
    expect(hint).toContain(`npm run model:tiny -- --data-dir ${server.dataDir}`);
    // A chat request names the missing model rather than failing obscurely.
    const chat = await send(server, '/v1/chat/completions', { body: { model: 'tiny', max_tokens: 2, messages: [{ role: 'user', content: 'Hi' }] } });
    expect(chat.status).toBe(404);
    expect(((await chat.json()) as { error: { code: string } }).error.code).toBe('model_not_found');

    // A model copied into the folder is in the very next answer (the list was cached for 5 s before).
    expect(await modelIds(server.url)).toEqual([]);
    copyFileSync(await tinyModelPath(), join(server.dataDir, 'models', 'tiny.gguf'));
    expect(await modelIds(server.url)).toEqual(['tiny']);
  });
});

describe('environment variables', () => {
  it('HEARTH_PORT, HEARTH_DATA_DIR and HEARTH_MODELS_DIR are honoured', async () => {
    const dataDir = await newDataDir(false);
    const modelsDir = tempFolder('env-models');
    copyFileSync(await tinyModelPath(), join(modelsDir, 'Other Tiny.gguf'));
    const port = await closedPort();
    const server = await spawnListening(
      HEARTH_BIN,
      ['serve'],
      cleanEnv({ HEARTH_PORT: String(port), HEARTH_DATA_DIR: dataDir, HEARTH_MODELS_DIR: modelsDir, HEARTH_EXTERNAL_MODELS: '0' }),
    );
    running.push(server);
    expect(server.url).toBe(`http://127.0.0.1:${port}`);
    const status = await json<ServerStatus>(`${server.url}/admin/status`);
    expect(status.data_dir).toBe(dataDir);
    expect(status.models_dirs).toEqual([join(dataDir, 'models'), modelsDir]);
    expect(existsSync(join(dataDir, 'hearth.lock'))).toBe(true);
    expect(existsSync(join(dataDir, 'config.yaml'))).toBe(true);
    expect(await modelIds(server.url)).toEqual(['other-tiny']);
    const chat = await send(server, '/v1/chat/completions', { body: { model: 'other-tiny', max_tokens: 2, messages: [{ role: 'user', content: 'Hi' }] } });
    expect(chat.status).toBe(200);
    expect(((await chat.json()) as { model: string }).model).toBe('other-tiny');
    expect((await server.stop()).code).toBe(0);
    expect(existsSync(join(dataDir, 'hearth.lock'))).toBe(false);
  });

  it('flags win over the environment', async () => {
    const envDir = await newDataDir(false);
    const flagDir = await newDataDir(true);
    const server = await spawnListening(
      HEARTH_BIN,
      ['serve', '--port', '0', '--data-dir', flagDir, '--no-external-models'],
      cleanEnv({ HEARTH_PORT: 'not-a-port', HEARTH_DATA_DIR: envDir }),
    );
    running.push(server);
    expect(server.port).toBeGreaterThan(0);
    expect((await json<ServerStatus>(`${server.url}/admin/status`)).data_dir).toBe(flagDir);
    expect(await modelIds(server.url)).toEqual(['tiny']);
    expect(existsSync(join(envDir, 'hearth.lock'))).toBe(false);
  });
});

describe('refusals at startup', () => {
  it('an invalid config.yaml makes hearth serve exit 1 listing every problem', async () => {
    const dataDir = await newDataDir(false);
    const config = join(dataDir, 'config.yaml');
    writeFileSync(config, 'version: 1\ncolour: red\nserver:\n  port: "abc"\nmodels:\n  parallel: 0\n');
    const result = await runNode(HEARTH_BIN, serveArgs(dataDir));
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(config);
    expect(result.stderr).toMatch(/colour: unknown key/);
    expect(result.stderr).toMatch(/server\.port: must be a whole number from 0 to 65535 \(line 4\)\n.*\n {4}> 4 \| {3}port: "abc"/);
    expect(result.stderr).toMatch(/models\.parallel: must be "auto" or a whole number from 1 to 64 \(line 6\)/);
    // A configuration mistake is not a crash: no stack trace.
    expect(result.stderr).not.toMatch(/^\s+at /m);
    // The refused start released its lock.
    expect(existsSync(join(dataDir, 'hearth.lock'))).toBe(false);
  });

  it('hearth config plan FILE shows each problem with what is allowed, at its line of FILE', async () => {
    const { server } = idle;
    const file = join(server.dataDir, 'change.yaml');
    writeFileSync(file, 'version: 1\nmodels:\n  gpu: cuda\n  threads: lots\n');
    const result = await runNode(HEARTH_BIN, ['config', 'plan', file, '--data-dir', server.dataDir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('  models.gpu: must be one of: "auto", "cpu" (line 3)\n      2 | models:\n    > 3 |   gpu: cuda\n        |        ^');
    expect(result.stderr).toContain('  models.threads: must be "auto" or a whole number from 1 to 256 (line 4)');
    expect(result.stderr).not.toMatch(/anyOf|must be equal to/);
  });

  it('invalid YAML makes hearth serve exit 1 naming the line', async () => {
    const dataDir = await newDataDir(false);
    writeFileSync(join(dataDir, 'config.yaml'), 'version: 1\nserver:\n  host: [oops\n');
    const result = await runNode(HEARTH_BIN, serveArgs(dataDir));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/not valid YAML \(line \d+\)/);
  });

  it('hearth --version prints the package version', async () => {
    const result = await runNode(HEARTH_BIN, ['--version']);
    expect(result).toMatchObject({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('hearth nonsense exits 2 saying where the commands are listed', async () => {
    const result = await runNode(HEARTH_BIN, ['nonsense']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('Unknown command "nonsense".\nRun "npm run hearth -- --help" for the commands.\n');
    expect(result.stdout).toBe('');
  });

  it('hearth serve --port abc exits 2 naming the flag', async () => {
    const result = await runNode(HEARTH_BIN, ['serve', '--port', 'abc']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--port must be a number from 0 to 65535, not "abc"/);
    expect(result.stderr).not.toMatch(/Usage:/);
    expect(result.stdout).toBe('');
  });

  it('hearth serve with an out-of-range port or an unknown flag exits 2', async () => {
    const [range, flag] = await Promise.all([runNode(HEARTH_BIN, ['serve', '--port', '70000']), runNode(HEARTH_BIN, ['serve', '--bogus'])]);
    expect(range.code).toBe(2);
    expect(range.stderr).toMatch(/--port/);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/bogus/);
  });

  it('a port in use exits 1 with a clear message', async () => {
    const holder = idle.server;
    const port = new URL(holder.url).port;
    // Started by hand, and by npm start (which says how to pass the port through npm): two
    // refused starts at once, each on a data directory of its own so neither meets the other's lock.
    const [dataDir, npmDataDir] = await Promise.all([newDataDir(false), newDataDir(false)]);
    const [result, fromNpm] = await Promise.all([
      runNode(HEARTH_BIN, ['serve', '--port', port, '--data-dir', dataDir, '--no-external-models']),
      runNode(HEARTH_BIN, ['serve', '--port', port, '--data-dir', npmDataDir, '--no-external-models'], {
        env: cleanEnv({ npm_lifecycle_event: 'start' }),
      }),
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`Port ${port} .*already in use`));
    expect(result.stderr).toContain('start on a free port: npm run hearth -- serve --port 0');
    expect(existsSync(join(dataDir, 'hearth.lock'))).toBe(false);
    expect(fromNpm.code).toBe(1);
    expect(fromNpm.stderr).toContain('start on a free port: npm start -- --port 0');
    expect(existsSync(join(npmDataDir, 'hearth.lock'))).toBe(false);
  });
});

describe('npm start', () => {
  it('passes its arguments through to hearth serve and serves the web app', async () => {
    const dataDir = await newDataDir(true);
    const server = await spawnListening(START_SCRIPT, ['--port', '0', '--data-dir', dataDir, '--no-external-models']);
    running.push(server);
    expect(server.port).toBeGreaterThan(0);
    expect((await json<ServerStatus>(`${server.url}/admin/status`)).data_dir).toBe(dataDir);
    expect(await modelIds(server.url)).toEqual(['tiny']);

    expect(existsSync(join(REPO_ROOT, 'build', 'web', 'index.html'))).toBe(true);
    const page = await fetch(`${server.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toMatch(/<html/i);

    // start.js forwards the signal; both it and hearth exit 0 and the lock is released.
    expect((await server.stop('SIGTERM')).code).toBe(0);
    await waitFor(() => !existsSync(join(dataDir, 'hearth.lock')), 'the lock file to go');
  }, 180_000);
});
