import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll } from 'vitest';
import { silentLogger } from '../../../companion/src/logger.js';
import type { ExtractionCall, ExtractionRunner, MemoryModels } from '../../../companion/src/memory/models.js';
import { MemoryService } from '../../../companion/src/memory/service.js';
import { normaliseMemorySettings } from '../../../companion/src/memory/settings.js';
import { openDatabase, type Db } from '../../../companion/src/store/database.js';
import type { MemorySettings } from '#shared/api/config.js';
import { sharedApp, testApp, type SharedApp, type TestApp } from '../../helpers/app.js';
import { tinyEmbeddingModelPath } from '../../helpers/models.js';
import { newDataDir } from '../../helpers/server.js';

interface MemoryAppOptions {
  /** The `memory:` section of config.yaml (YAML lines). */
  memoryYaml?: string;
  withModel?: boolean;
  withEmbeddingModel?: boolean;
}

/** The real app on a fresh data directory whose config.yaml has this `memory:` section. */
export async function memoryApp(options: MemoryAppOptions = {}): Promise<TestApp> {
  return testApp({ dataDir: await memoryDataDir(options) });
}

/** One memoryApp for the tests of a file: built before the first test, closed after the last (see sharedApp). */
export function sharedMemoryApp(options: MemoryAppOptions = {}): SharedApp {
  return sharedApp({ prepare: async () => ({ dataDir: await memoryDataDir(options) }) });
}

async function memoryDataDir(options: MemoryAppOptions): Promise<string> {
  const dataDir = await newDataDir(options.withModel ?? false);
  if (options.withEmbeddingModel) {
    mkdirSync(join(dataDir, 'models'), { recursive: true });
    copyFileSync(await tinyEmbeddingModelPath(), join(dataDir, 'models', 'tiny-embed.gguf'));
  }
  writeFileSync(
    join(dataDir, 'config.yaml'),
    `version: 1\nmodels:\n  external_sources: false\n  threads: 1\n  context_size: 2048\n${options.memoryYaml ? `memory:\n${options.memoryYaml}\n` : ''}`,
  );
  return dataDir;
}

export async function send(
  app: FastifyInstance,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  body?: unknown,
  remoteAddress = '127.0.0.1',
): Promise<LightMyRequestResponse> {
  return app.inject({ method, url, remoteAddress, ...(body === undefined ? {} : { payload: body as Record<string, unknown> }) });
}

/** A memory model that answers with a fixed extraction (or what `answer` returns) and records its calls. */
export function scriptedModels(
  answer: (call: ExtractionCall) => unknown = () => sampleExtraction(),
): MemoryModels & { calls: ExtractionCall[]; available: boolean } {
  const models = {
    calls: [] as ExtractionCall[],
    available: true,
    async extraction(): Promise<ExtractionRunner | undefined> {
      if (!models.available) return undefined;
      return {
        id: 'scripted',
        contextSize: 8192,
        async run(call) {
          models.calls.push(call);
          return { text: JSON.stringify(answer(call)), finishReason: 'stop' as const };
        },
      };
    },
  };
  return models;
}

export function sampleExtraction(overrides: Record<string, unknown> = {}) {
  return {
    episode: { summary: 'Ana planned a trip to Lisbon and chose the train.', topics: ['travel', 'Lisbon'], decisions: ['take the train'] },
    entities: [{ name: 'Lisbon', kind: 'place' }],
    identity: [{ key: 'name', value: 'Ana' }],
    facts: ['Ana prefers trains to planes.'],
    ...overrides,
  };
}

const folders: string[] = [];
// Registered when a test file imports this module: its folders go when the file's tests end.
afterAll(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A MemoryService on a real SQLite file in a temp folder (removed after the test file). */
export function memoryService(models: MemoryModels, settings: Partial<MemorySettings> = {}): { memory: MemoryService; db: Db; settings: MemorySettings } {
  const folder = mkdtempSync(join(tmpdir(), 'hearth-memory-'));
  folders.push(folder);
  const file = join(folder, 'hearth.db');
  const db = openDatabase(file);
  const current = { ...normaliseMemorySettings({}), ...settings };
  const memory = new MemoryService({ db, settings: () => current, models, log: silentLogger });
  return { memory, db, settings: current };
}
