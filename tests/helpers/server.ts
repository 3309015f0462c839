import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { expect } from 'vitest';
import { writeTinyModel } from '../../scripts/gguf/write-model.js';
import { registerAdminServer } from './admin-fetch.js';
import { untilListening } from './hearth-process.js';
import { perFile } from './per-file.js';
import { tinyModelPath } from './models.js';
import { tempFolder } from './temp.js';

const HEARTH = fileURLToPath(new URL('../../bin/hearth.js', import.meta.url));

export interface RunningServer {
  url: string;
  dataDir: string;
  process: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** SIGTERM and wait for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface ServerOptions {
  dataDir?: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** Put the tiny model in the data directory's models folder (default true). */
  withModel?: boolean;
}

/** A fresh data directory with the tiny model installed as `tiny`; removed after the test file. */
export async function newDataDir(withModel = true): Promise<string> {
  const dataDir = tempFolder('data');
  if (withModel) {
    mkdirSync(join(dataDir, 'models'), { recursive: true });
    copyFileSync(await tinyModelPath(), join(dataDir, 'models', 'tiny.gguf'));
  }
  return dataDir;
}

/** A fresh data directory (`newDataDir`) whose config.yaml is `version: 1` followed by `yaml`'s lines. */
export async function configuredDataDir(yaml: string, withModel = true): Promise<string> {
  const dataDir = await newDataDir(withModel);
  writeFileSync(join(dataDir, 'config.yaml'), `version: 1\n${yaml}`);
  return dataDir;
}

/**
 * A fresh data directory (without a model unless `withModel`) whose config.yaml requires an
 * access key (`server.auth.required`), with `serverYaml`'s lines added to its `server:` section.
 */
export function keyRequiredDataDir(options: { withModel?: boolean; serverYaml?: string } = {}): Promise<string> {
  return configuredDataDir(`server:\n  auth:\n    required: true\n${options.serverYaml ?? ''}`, options.withModel ?? false);
}

/**
 * A fresh data directory whose models are a generated draft pair and a model of another
 * vocabulary: `target` (the draft plus 4 blocks whose output projections are zero, so it writes
 * what the draft proposes), `draft`, and `thinking`.
 */
export async function draftPairDataDir(): Promise<string> {
  const dataDir = await newDataDir(false);
  const models = join(dataDir, 'models');
  mkdirSync(models, { recursive: true });
  await writeTinyModel(join(models, 'target.gguf'), { size: 'tiny', seed: 3, blocks: 2, zeroExtraBlocks: 4 });
  await writeTinyModel(join(models, 'draft.gguf'), { size: 'tiny', seed: 3, blocks: 2 });
  await writeTinyModel(join(models, 'thinking.gguf'), { size: 'tiny', seed: 3, thinking: true });
  return dataDir;
}

/** Runs the real `hearth serve --port 0` and resolves once it printed its address. */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const dataDir = options.dataDir ?? (await newDataDir(options.withModel ?? true));
  const child = spawn(process.execPath, [HEARTH, 'serve', '--port', '0', '--data-dir', dataDir, '--no-external-models', ...(options.args ?? [])], {
    env: { ...process.env, HEARTH_LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { url, exited, stdout, stderr } = await untilListening(child, 'hearth serve');
  registerAdminServer(url, dataDir);
  return {
    url,
    dataDir,
    process: child,
    stdout,
    stderr,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return (await exited).code;
    },
  };
}

/** A request to a running server: a JSON body (POST unless `method` says otherwise), a key as Bearer, more headers. */
export function send(
  server: { url: string },
  path: string,
  init: { method?: string; key?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key) headers.authorization = `Bearer ${init.key}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${server.url}${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}

/**
 * One running server for the tests of a file, with the official openai client pointed at it:
 * started before the first test (with what `prepare` adds to the options: a data directory with
 * the models the tests need, say), and stopped after the last, when it must exit 0. Its members
 * are read inside tests and hooks.
 */
export function sharedServer(options: ServerOptions & { prepare?: () => Promise<ServerOptions> } = {}): {
  readonly server: RunningServer;
  readonly client: OpenAI;
} {
  const shared = perFile(
    'The shared server',
    async () => {
      // Read when the server starts: a file's own beforeAll may have filled `options` in by then.
      const { prepare, ...start } = options;
      const server = await startServer({ ...start, ...(await prepare?.()) });
      return { server, client: new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 }) };
    },
    async ({ server }) => {
      expect(await server.stop()).toBe(0);
    },
  );
  return {
    get server() {
      return shared.value.server;
    },
    get client() {
      return shared.value.client;
    },
  };
}
