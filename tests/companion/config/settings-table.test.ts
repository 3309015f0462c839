import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ApplyResult } from '#shared/api/admin-config.js';
import type { ConfigDocument } from '#shared/api/config.js';
import { buildApp } from '../../../companion/src/app.js';
import { checkDocument } from '../../../companion/src/config/document.js';
import { planChange } from '../../../companion/src/config/plan.js';
import { configSchema } from '../../../companion/src/config/schema.js';
import { schemaPaths, settingKey, SETTINGS, settingsWith } from '../../../companion/src/config/settings-table.js';
import { silentLogger } from '../../../companion/src/logger.js';
import { createServices, type Services } from '../../../companion/src/services.js';
import { dataPaths } from '../../../companion/src/store/data-dir.js';
import { SecretStore } from '../../../companion/src/store/secrets.js';
import { startScriptedProvider, type ScriptedProvider } from '../../fixtures/scripted-provider.js';
import { tinyModelPath } from '../../helpers/models.js';
import { newDataDir } from '../../helpers/server.js';
import { tempFolder } from '../../helpers/temp.js';
import { until } from '../../helpers/until.js';

/*
 * The settings table (config/settings-table.ts) against the schema, the plan and the running
 * companion: every setting is covered once; a change of a `restart` or `reload` setting is planned
 * as such; and every `live` setting, changed through POST /admin/config/apply, changes what the
 * companion does right after (seen through its routes, never by reading the configuration back).
 */

describe('the settings table', () => {
  const paths = schemaPaths(configSchema);

  it('covers every setting of the schema with exactly one row', () => {
    expect(paths.length).toBeGreaterThan(40);
    const uncovered = paths.filter((path) => settingKey(path) === undefined);
    expect(uncovered, 'settings with no row in config/settings-table.ts: say how a change of each takes effect').toEqual([]);
  });

  it('has no row that names no setting', () => {
    const stale = Object.keys(SETTINGS).filter((key) => !paths.some((path) => path === key || path.startsWith(`${key}.`)));
    expect(stale).toEqual([]);
  });

  it('has no row inside another row (each setting takes effect one way)', () => {
    const keys = Object.keys(SETTINGS);
    const nested = keys.filter((key) => keys.some((other) => other !== key && key.startsWith(`${other}.`)));
    expect(nested).toEqual([]);
  });
});

/** A change of each `restart` and `reload` setting, as a document would ask for it. */
const NOT_LIVE_CHANGES: Record<string, Record<string, unknown>> = {
  'server.host': { server: { host: '127.0.0.2' } },
  'server.port': { server: { port: 4999 } },
  'server.body_limit_mb': { server: { body_limit_mb: 9 } },
  'server.limits.admin_body_kb': { server: { limits: { admin_body_kb: 600 } } },
  'server.limits.tools_body_mb': { server: { limits: { tools_body_mb: 5 } } },
  'server.limits.memory_body_mb': { server: { limits: { memory_body_mb: 17 } } },
  'server.limits.images_body_mb': { server: { limits: { images_body_mb: 65 } } },
  'server.limits.request_timeout_seconds': { server: { limits: { request_timeout_seconds: 61 } } },
  'server.remote': { server: { remote: { port: 4799 } } },
  'server.ollama': { server: { ollama: { port: 11435 } } },
  'models.gpu': { models: { gpu: 'cpu' } },
  'models.engine': { models: { engine: 'in-process' } },
  'models.threads': { models: { threads: 2 } },
  'models.context_size': { models: { context_size: 2048 } },
  'models.parallel': { models: { parallel: 2 } },
  'models.queue_limit': { models: { queue_limit: 10 } },
  'models.idle_unload_seconds': { models: { idle_unload_seconds: 100 } },
  'models.overrides': { models: { overrides: { tiny: { gpu_layers: 0 } } } },
  'models.slot_cache_mb': { models: { slot_cache_mb: 100 } },
};

describe('the plan says what a change of a restart or reload setting needs', () => {
  const current = (): ConfigDocument => checkDocument({ version: 1 }).document!;
  const planOf = (document: Record<string, unknown>, loaded: string[]) => {
    const planned = planChange({ version: 1, ...document }, false, {
      current: current(),
      resolves: () => true,
      localModels: new Set(['tiny']),
      activeKeys: 0,
      loaded,
    });
    expect(planned.problems).toEqual([]);
    return planned.plan!;
  };

  it('has a change to try for every restart and reload setting', () => {
    expect(Object.keys(NOT_LIVE_CHANGES).sort()).toEqual([...settingsWith('restart'), ...settingsWith('reload')].sort());
  });

  for (const key of settingsWith('restart')) {
    it(`${key}: after a restart`, () => {
      const plan = planOf(NOT_LIVE_CHANGES[key]!, ['tiny']);
      expect(plan.restart_required.length).toBeGreaterThan(0);
      for (const path of plan.restart_required) expect(settingKey(path)).toBe(key);
      expect(plan.reload_required).toEqual([]);
    });
  }

  for (const key of settingsWith('reload')) {
    it(`${key}: when a loaded model is loaded again, and for no model that is not loaded`, () => {
      expect(planOf(NOT_LIVE_CHANGES[key]!, ['tiny'])).toMatchObject({ restart_required: [], reload_required: ['tiny'] });
      expect(planOf(NOT_LIVE_CHANGES[key]!, [])).toMatchObject({ restart_required: [], reload_required: [] });
    });
  }

  it("a model's own load setting shadows the section's: only the models it reaches are listed", () => {
    const plan = planChange({ version: 1, models: { context_size: 2048 } }, false, {
      current: { ...current(), models: { ...current().models, overrides: { pinned: { context_size: 8192 } } } },
      resolves: () => true,
      localModels: new Set(),
      activeKeys: 0,
      loaded: ['tiny', 'pinned'],
    });
    expect(plan.plan!.reload_required).toEqual(['tiny']);
  });
});

// ---------------------------------------------------------------------------------------------
// Every live setting, through the real apply route.

let app: FastifyInstance;
let services: Services;
let scripted: ScriptedProvider;
let original: ConfigDocument;
let originalText: string;
let workspace: string;
let modelsFolder: string;
let imagesFolder: string;
let key: string;
const home = { HOME: process.env.HOME, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME, HF_HOME: process.env.HF_HOME };
/** The held request of the streams_per_key probe: released when the provider closes. */
let held: Promise<LightMyRequestResponse> | undefined;

beforeAll(async () => {
  // Other apps' model folders (models.external_sources) are looked for in a home of the test's own.
  const fakeHome = tempFolder('home');
  mkdirSync(join(fakeHome, '.lmstudio', 'models', 'walker-org', 'walker-repo'), { recursive: true });
  copyFileSync(await tinyModelPath(), join(fakeHome, '.lmstudio', 'models', 'walker-org', 'walker-repo', 'lmstudio-walker.gguf'));
  process.env.HOME = fakeHome;
  delete process.env.XDG_CACHE_HOME;
  delete process.env.HF_HOME;
  modelsFolder = tempFolder('models');
  copyFileSync(await tinyModelPath(), join(modelsFolder, 'folder-walker.gguf'));
  imagesFolder = tempFolder('images');
  mkdirSync(join(imagesFolder, 'walker-sd'));
  writeFileSync(join(imagesFolder, 'walker-sd', 'model_index.json'), '{}');
  workspace = tempFolder('workspace');
  writeFileSync(join(workspace, 'big.txt'), 'x'.repeat(4096));

  scripted = await startScriptedProvider({
    script: (body: { messages: { role: string; content: string }[]; tools?: unknown[] }) => {
      const last = body.messages.at(-1)!;
      if (last.content === 'hold') return { content: 'held', delayMs: 120_000 };
      if (body.tools && last.role !== 'tool') return { tool_calls: [{ name: 'read_file', arguments: { path: 'big.txt' } }] };
      return { content: 'done' };
    },
  });
  const dataDir = await newDataDir(false);
  new SecretStore(dataPaths(dataDir).secrets).set('WALKER_HOST', '{}');
  const document = {
    version: 1,
    providers: [{ name: 'script', base_url: scripted.baseUrl, models: ['scripted'] }],
    agents: [{ id: 'reader', model: 'script/scripted', tools: ['read_file'], workspace, memory: { enabled: false }, max_steps: 3 }],
  };
  writeFileSync(join(dataDir, 'config.yaml'), JSON.stringify(document, null, 2));
  // No process-level overrides (flags, HEARTH_* variables): the configuration alone decides.
  services = await createServices({ dataDir, log: silentLogger, version: 'test' });
  app = await buildApp({ services, webRoot: '/nonexistent' });
  key = services.keys.create({ label: 'walker' }).key;
  original = services.config;
  originalText = readFileSync(services.paths.config, 'utf8');
});

afterAll(async () => {
  await scripted?.close();
  await held;
  await app?.close();
  await services?.close();
  Object.assign(process.env, home);
  for (const [name, value] of Object.entries(home)) if (value === undefined) delete process.env[name];
});

afterEach(() => {
  writeFileSync(services.paths.config, originalText);
  services.reconfigure(original);
});

const owner = (request: InjectOptions): Promise<LightMyRequestResponse> =>
  app.inject({ ...request, headers: { ...request.headers, authorization: `Bearer ${services.admin.token}` } });
const json = async (request: InjectOptions, asOwner = false) => (await (asOwner ? owner(request) : app.inject(request))).json();
const names = (list: { data: { id?: string; name?: string }[] }) => list.data.map((item) => item.id ?? item.name);

async function apply(document: Record<string, unknown>): Promise<ApplyResult> {
  const response = await owner({ method: 'POST', url: '/admin/config/apply', payload: { document: { version: 1, ...document }, confirm_high_risk: true } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as ApplyResult;
}

interface Probe {
  /** The change, as a document sent to POST /admin/config/apply (read once the test's folders and provider exist). */
  readonly change: Record<string, unknown>;
  /** What the companion does, seen from outside: it must differ after the change. */
  observe(): Promise<unknown>;
  /** What `observe` gives once the change is in force. */
  after: unknown;
  setup?(): Promise<void>;
}

const modelIds = async () => names(await json({ method: 'GET', url: '/v1/models' }));
const chat = (content: string) =>
  app.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: { authorization: `Bearer ${key}` },
    payload: { model: 'script/scripted', messages: [{ role: 'user', content }] },
  });

const PROBES: Record<string, Probe> = {
  'server.auth.required': {
    change: { server: { auth: { required: true } } },
    observe: async () => (await app.inject({ method: 'GET', url: '/v1/models', remoteAddress: '127.3.0.1' })).statusCode,
    after: 401,
  },
  'server.cors.origins': {
    change: { server: { cors: { origins: ['http://walker.example'] } } },
    observe: async () =>
      (
        await app.inject({
          method: 'OPTIONS',
          url: '/v1/chat/completions',
          headers: { origin: 'http://walker.example', 'access-control-request-method': 'POST' },
        })
      ).statusCode,
    after: 204,
  },
  'server.allowed_hosts': {
    change: { server: { allowed_hosts: ['walker.lan'] } },
    observe: async () => (await app.inject({ method: 'GET', url: '/health', headers: { host: 'walker.lan' } })).statusCode,
    after: 200,
  },
  'server.limits.streams_per_key': {
    // One request of the key stays open at the provider; a second one is refused once the key may have only one.
    setup: async () => {
      held ??= chat('hold');
      await until(() => (scripted.requests.some((request) => request.body.messages.at(-1).content === 'hold') ? true : undefined), 'the held request');
    },
    change: { server: { limits: { streams_per_key: 1 } } },
    observe: async () => (await chat('second')).statusCode,
    after: 429,
  },
  'models.dirs': {
    get change() {
      return { models: { dirs: [modelsFolder] } };
    },
    observe: async () => (await modelIds()).includes('folder-walker'),
    after: true,
  },
  'models.external_sources': {
    change: { models: { external_sources: false } },
    observe: async () => (await modelIds()).some((id) => id?.includes('lmstudio-walker')),
    after: false,
  },
  'models.remote_images': {
    change: { models: { remote_images: { enabled: true } } },
    // A remote image on a private address: refused as "off" before, as private once fetching is on.
    observe: async () => {
      const content = [{ type: 'image_url', image_url: { url: 'http://10.0.0.1/cat.png' } }];
      const payload = { model: 'lmstudio-walker', messages: [{ role: 'user', content }] };
      const answer = await json({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, payload });
      return /leads to 10\.0\.0\.1/.test((answer as { error: { message: string } }).error.message);
    },
    after: true,
  },
  'models.native_build': {
    change: { models: { native_build: 'off' } },
    // The native build's state says why it is not made: before, the tests or the in-process engine; then the setting.
    observe: async () => (await json({ method: 'GET', url: '/admin/status' }, true)).engine.native.build.reason,
    after: 'models.native_build is off',
  },
  'models.memory_budget_mb': {
    change: { models: { memory_budget_mb: 1234 } },
    observe: async () => (await json({ method: 'GET', url: '/admin/status' }, true)).memory_budget_bytes,
    after: 1234 * 1048576,
  },
  memory: {
    change: { memory: { memory_budget_tokens: 1500 } },
    observe: async () => (await json({ method: 'POST', url: '/memory/context', payload: { agent_id: 'reader', query: 'anything' } })).budget_tokens,
    after: 1500,
  },
  providers: {
    get change() {
      return { providers: [{ name: 'second', base_url: scripted.baseUrl, models: ['scripted'] }] };
    },
    observe: async () => (await modelIds()).includes('second/scripted'),
    after: true,
  },
  agents: {
    change: { agents: [{ id: 'walker', model: 'script/scripted' }] },
    observe: async () => names(await json({ method: 'GET', url: '/agents' })).includes('walker'),
    after: true,
  },
  agents_defaults: {
    // The 4 KiB file read by the agent's tool comes back whole, then cut to 1 KiB.
    change: { agents_defaults: { tool_output_kb: 1 } },
    observe: async () => {
      const run = await json({ method: 'POST', url: '/agents/reader/run', payload: { input: 'read big.txt' } });
      const output = String(run.steps?.[0]?.tool_calls?.[0]?.output ?? JSON.stringify(run));
      return output.length > 2048;
    },
    after: false,
  },
  'images.dirs': {
    get change() {
      return { images: { dirs: [imagesFolder] } };
    },
    observe: async () => names(await json({ method: 'GET', url: '/v1/images/models' })).includes('walker-sd'),
    after: true,
  },
  'images.hosted': {
    change: { images: { hosted: { enabled: true, monthly_budget_usd: 5 } } },
    observe: async () => (await json({ method: 'GET', url: '/v1/media/providers' })).budget,
    after: expect.objectContaining({ enabled: true, monthly_budget_usd: 5 }),
  },
  mcp_services: {
    change: { mcp_services: [{ name: 'walker', transport: 'http', url: 'http://127.0.0.1:9/mcp', auto_connect: false }] },
    observe: async () => names({ data: (await json({ method: 'GET', url: '/admin/mcp/services' }, true)).services }).includes('walker'),
    after: true,
  },
  media_providers: {
    change: { media_providers: [{ name: 'walker', base_url: 'http://127.0.0.1:9/v1', models: [{ id: 'clip', usd_per_second: 0.1 }] }] },
    observe: async () => names(await json({ method: 'GET', url: '/v1/media/providers' })).includes('walker'),
    after: true,
  },
  remote_hosts: {
    change: {
      remote_hosts: [{ name: 'walker', url: 'https://127.0.0.1:4778', fingerprint: Array(32).fill('AB').join(':'), credential: 'secret:WALKER_HOST' }],
    },
    observe: async () => names(await json({ method: 'GET', url: '/admin/remote-hosts' }, true)).includes('walker'),
    after: true,
  },
  cloud_workspaces: {
    change: { cloud_workspaces: [{ name: 'walker', workspace_id: 'w1', issuer: 'https://issuer.example', client_id: 'hearth' }] },
    observe: async () => names(await json({ method: 'GET', url: '/admin/cloud/workspaces' }, true)).includes('walker'),
    after: true,
  },
};

describe('every live setting changes what the companion does right after it is applied', () => {
  it('has a probe for every live setting, and none for another', () => {
    expect(Object.keys(PROBES).sort()).toEqual(settingsWith('live').sort());
  });

  for (const setting of settingsWith('live')) {
    it(setting, async () => {
      const probe = PROBES[setting];
      if (!probe) throw new Error(`No probe for the live setting ${setting}: add one to PROBES (a change, and what it changes).`);
      await probe.setup?.();
      const before = await probe.observe();
      expect(before, 'the probe sees the change only once it is applied').not.toEqual(probe.after);
      const applied = await apply(probe.change);
      expect(applied).toMatchObject({ restart_required: [], reload_required: [] });
      await expect.poll(() => probe.observe()).toEqual(probe.after);
    });
  }
});
