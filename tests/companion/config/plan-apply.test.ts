import { copyFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { loadConfigFile } from '../../../companion/src/config/document.js';
import type { Services } from '../../../companion/src/services.js';
import { dataPaths } from '../../../companion/src/store/data-dir.js';
import { SecretStore } from '../../../companion/src/store/secrets.js';
import type { ApplyResult, ConfigChange, ConfigPlan, ConfigProblem, ConfigRisk } from '#shared/api/admin-config.js';
import type { ConfigDocument } from '#shared/api/config.js';
import type { ModelList } from '#shared/api/openai.js';
import { asOwner, testApp } from '../../helpers/app.js';
import { startMockProvider, type MockProvider } from '../../helpers/mock-provider.js';
import { tinyModelPath } from '../../helpers/models.js';
import { newDataDir } from '../../helpers/server.js';

/*
 * Configuration as a document, through the admin routes with inject: export, schema, plan,
 * apply. Every test starts from the same configuration: afterEach puts the original
 * config.yaml bytes and configuration back.
 */

const SECRET_VALUE = 'sk-live-7f3a9c1e5b2d4f60a8c9e1d2b3a4f5e6';
const HEADER_SECRET = 'org-secret-41c0ffee99d1';
const ENV_NAME = 'HEARTH_PLAN_APPLY_TEST_TOKEN';

let app: FastifyInstance;
let services: Services;
let close: () => Promise<void>;
let provider: MockProvider;
let originalText: string;
let original: ConfigDocument;
let configFile: string;

beforeAll(async () => {
  const dataDir = await newDataDir(false);
  const secrets = new SecretStore(dataPaths(dataDir).secrets);
  secrets.set('PROVIDER_KEY', SECRET_VALUE);
  secrets.set('ORG_HEADER', HEADER_SECRET);
  process.env[ENV_NAME] = 'env-value-not-to-be-exported';
  provider = await startMockProvider({ token: SECRET_VALUE, models: ['mock-small', 'mock-large'] });
  ({ app, services, close } = await testApp({ dataDir }));
  configFile = services.paths.config;
  originalText = readFileSync(configFile, 'utf8');
  original = services.config;
});

afterAll(async () => {
  await close();
  await provider.close();
  delete process.env[ENV_NAME];
});

afterEach(() => {
  vi.restoreAllMocks();
  writeFileSync(configFile, originalText);
  services.reconfigure(original);
});

type ErrorWith<T> = { message: string; type: string; code: string; param: string | null } & T;

async function post(path: '/admin/config/plan' | '/admin/config/apply', body: Record<string, unknown>): Promise<LightMyRequestResponse> {
  return app.inject(asOwner({ method: 'POST', url: path, payload: body }));
}

async function plan(document: Record<string, unknown>, prune = false): Promise<ConfigPlan> {
  const response = await post('/admin/config/plan', { document: { version: 1, ...document }, prune });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as ConfigPlan;
}

async function apply(document: Record<string, unknown>, options: { prune?: boolean; confirm?: boolean } = {}): Promise<ApplyResult> {
  const response = await post('/admin/config/apply', {
    document: { version: 1, ...document },
    prune: options.prune ?? false,
    confirm_high_risk: options.confirm ?? false,
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as ApplyResult;
}

async function exported(format: 'yaml' | 'json' = 'json'): Promise<string> {
  const response = await app.inject(asOwner({ method: 'GET', url: `/admin/config/export?format=${format}` }));
  expect(response.statusCode).toBe(200);
  return response.body;
}

const exportedDocument = async (): Promise<ConfigDocument> => JSON.parse(await exported('json')) as ConfigDocument;

function auditRows(): { id: number; peer: string; prune: number; confirmed: number; outcome: string; changes: ConfigChange[]; risks: ConfigRisk[] }[] {
  return (services.db.prepare('SELECT * FROM config_audit ORDER BY id').all() as Record<string, unknown>[]).map((row) => ({
    id: row.id as number,
    peer: row.peer as string,
    prune: row.prune as number,
    confirmed: row.confirmed as number,
    outcome: row.outcome as string,
    changes: JSON.parse(row.changes_json as string) as ConfigChange[],
    risks: JSON.parse(row.risks_json as string) as ConfigRisk[],
  }));
}

/** A snapshot of everything an attempt must leave alone when it is refused. */
async function snapshot(): Promise<{ file: string; exported: string; config: string; audit: number }> {
  return { file: readFileSync(configFile, 'utf8'), exported: await exported('json'), config: JSON.stringify(services.config), audit: auditRows().length };
}

const mockProvider = (name = 'mock') => ({ name, base_url: provider.baseUrl, api_key: 'secret:PROVIDER_KEY' });

const riskCodes = (risks: ConfigRisk[]) => risks.map((risk) => risk.code).sort();

describe('GET /admin/config/export and /admin/config/schema', () => {
  it('exports the whole effective configuration as YAML or JSON, the same document either way', async () => {
    const yamlResponse = await app.inject(asOwner({ method: 'GET', url: '/admin/config/export' }));
    expect(yamlResponse.statusCode).toBe(200);
    expect(yamlResponse.headers['content-type']).toMatch(/yaml/);
    expect(yamlResponse.headers['cache-control']).toBe('no-store');
    const jsonResponse = await app.inject(asOwner({ method: 'GET', url: '/admin/config/export?format=json' }));
    expect(jsonResponse.headers['content-type']).toMatch(/json/);
    const fromYaml = parse(yamlResponse.body) as ConfigDocument;
    const fromJson = jsonResponse.json() as ConfigDocument;
    expect(fromYaml).toEqual(fromJson);
    expect(fromJson).toEqual(services.config);
    for (const section of ['server', 'models', 'memory', 'providers', 'agents', 'images']) expect(fromJson).toHaveProperty(section);
    expect(fromJson.version).toBe(1);
    expect(fromJson.memory).toEqual({
      memory_budget_tokens: 800,
      summary_debounce_seconds: 60,
      consolidation_interval_hours: 24,
      salience_floor: 0.2,
      episode_retention_days: 365,
    });

    const bad = await app.inject(asOwner({ method: 'GET', url: '/admin/config/export?format=toml' }));
    expect(bad.statusCode).toBe(400);
  });

  it('serves a JSON Schema that the exported document satisfies and that refuses unknown keys', async () => {
    const response = await app.inject(asOwner({ method: 'GET', url: '/admin/config/schema' }));
    expect(response.statusCode).toBe(200);
    const schema = response.json() as Record<string, unknown>;
    const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
    await apply({ providers: [mockProvider()], server: { cors: { origins: ['http://app.example'] } } }, { confirm: true });
    expect(validate(await exportedDocument()), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ version: 1, surprise: true })).toBe(false);
    expect(validate({ version: 2 })).toBe(false);
    expect(validate({ version: 1, providers: [{ name: 'x', base_url: 'http://h/v1', api_key: 'sk-literal-key' }] })).toBe(false);
  });

  it('never contains a secret value: only its reference, in YAML, JSON, status and the file', async () => {
    const applied = await apply({
      providers: [{ ...mockProvider(), headers: { 'x-org': 'secret:ORG_HEADER', 'x-env': `env:${ENV_NAME}` } }],
    });
    expect(applied.applied).toBe(true);
    // The references resolve: the provider (which demands the secret) lists its models.
    const models = await app.inject({ method: 'GET', url: '/v1/models' });
    expect((models.json() as { data: { id: string }[] }).data.map((model) => model.id)).toEqual(expect.arrayContaining(['mock/mock-small', 'mock/mock-large']));
    expect(provider.requests.at(-1)!.headers['x-org']).toBe(HEADER_SECRET);

    const texts = {
      yaml: await exported('yaml'),
      json: await exported('json'),
      status: (await app.inject(asOwner({ method: 'GET', url: '/admin/status' }))).body,
      file: readFileSync(configFile, 'utf8'),
      plan: (await post('/admin/config/plan', { document: { version: 1 } })).body,
    };
    for (const [where, text] of Object.entries(texts)) {
      for (const value of [SECRET_VALUE, HEADER_SECRET, process.env[ENV_NAME]!, SECRET_VALUE.slice(0, 12), SECRET_VALUE.slice(-12)]) {
        expect(text.includes(value), `${where} contains a secret`).toBe(false);
      }
    }
    expect(texts.yaml).toContain('secret:PROVIDER_KEY');
    expect(texts.json).toContain('secret:ORG_HEADER');
    expect(texts.json).toContain(`env:${ENV_NAME}`);
  });

  it('round-trips: planning or applying the export (with or without prune) changes nothing', async () => {
    await apply({ providers: [mockProvider()], models: { parallel: 2 } });
    const document = await exportedDocument();
    for (const prune of [false, true]) {
      const planned = await plan(document as unknown as Record<string, unknown>, prune);
      expect(planned).toEqual({ valid: true, changes: [], risks: [], restart_required: [], reload_required: [], warnings: [] });
    }
    const before = readFileSync(configFile, 'utf8');
    const applied = await apply(parse(await exported('yaml')) as Record<string, unknown>, { prune: true });
    expect(applied.changes).toEqual([]);
    expect(parse(readFileSync(configFile, 'utf8'))).toEqual(parse(before));
  });
});

describe('POST /admin/config/plan', () => {
  it('describes the changes per section and target with their risks, and changes nothing', async () => {
    const before = await snapshot();
    const planned = await plan({
      server: { cors: { origins: ['http://app.example'] }, limits: { streams_per_key: 2 } },
      models: { parallel: 2, idle_unload_seconds: 60 },
      providers: [mockProvider()],
      agents: [{ id: 'helper', name: 'Helper', tool_policy: { write: 'deny', exec: 'deny' } }],
    });
    expect(planned.valid).toBe(true);
    expect(planned.changes).toEqual(
      expect.arrayContaining([
        { section: 'server', target: 'server', action: 'update', fields: ['cors.origins', 'limits.streams_per_key'] },
        { section: 'models', target: 'models', action: 'update', fields: ['idle_unload_seconds', 'parallel'] },
        { section: 'providers', target: 'mock', action: 'create', fields: ['api_key', 'base_url', 'name'] },
        expect.objectContaining({ section: 'agents', target: 'helper', action: 'create' }),
      ]),
    );
    expect(planned.changes).toHaveLength(4);
    expect(riskCodes(planned.risks)).toEqual(['cors_widened']);
    expect(planned.risks[0]).toMatchObject({ level: 'high', path: 'server.cors.origins' });
    expect(planned.restart_required).toEqual([]);
    expect(await snapshot()).toEqual(before);
    // Nothing was put in force either.
    const preflight = await app.inject({
      method: 'OPTIONS',
      url: '/v1/chat/completions',
      headers: { origin: 'http://app.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.statusCode).toBe(403);
  });

  it('merges without prune (nothing deleted) and replaces with prune (what is missing is deleted or reset)', async () => {
    await apply({ providers: [mockProvider('one'), mockProvider('two')], models: { parallel: 2 } });
    const merged = await plan({ providers: [{ ...mockProvider('two'), models: ['fixed'] }], models: { context_size: 2048 } });
    expect(merged.changes).toEqual([
      { section: 'models', target: 'models', action: 'update', fields: ['context_size'] },
      { section: 'providers', target: 'two', action: 'update', fields: ['models'] },
    ]);
    expect(merged.risks).toEqual([]);

    const pruned = await plan({ providers: [mockProvider('two')] }, true);
    expect(pruned.changes).toEqual(
      expect.arrayContaining([
        { section: 'models', target: 'models', action: 'update', fields: ['parallel'] },
        { section: 'providers', target: 'one', action: 'delete', fields: [] },
      ]),
    );
    expect(pruned.changes).toHaveLength(2);
    expect(pruned.risks).toEqual([expect.objectContaining({ code: 'prune_delete', path: 'providers.one' })]);
  });

  it('lists every problem with its path at once, and changes nothing', async () => {
    const before = await snapshot();
    const document = {
      version: 1,
      surprise: true,
      server: { port: 'eighty', bogus: 1, cors: { origins: ['not a url'] } },
      models: { parallel: 0 },
      providers: [
        { name: 'Bad Name', base_url: 'ftp://example' },
        { name: 'nokey', base_url: 'http://127.0.0.1:9/v1', api_key: 'secret:NOT_SET_ANYWHERE' },
        { name: 'noenv', base_url: 'http://127.0.0.1:9/v1', api_key: 'env:HEARTH_TEST_UNSET_VARIABLE' },
        { name: 'literal', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-literal' },
      ],
      agents: [{ id: 'helper', model: 'no-such-model', tool_policy: { write: 'sometimes' } }],
      memory: { embedding_model: 'no-such-embedder' },
    };
    for (const path of ['/admin/config/plan', '/admin/config/apply'] as const) {
      const response = await post(path, { document, confirm_high_risk: true });
      expect(response.statusCode).toBe(400);
      const error = response.json().error as ErrorWith<{ problems: ConfigProblem[] }>;
      expect(error.code).toBe('config_invalid');
      const paths = error.problems.map((problem) => problem.path);
      for (const expected of [
        'surprise',
        'server.port',
        'server.bogus',
        'server.cors.origins[0]',
        'models.parallel',
        'providers[0].name',
        'providers[0].base_url',
        'providers[1].api_key',
        'providers[2].api_key',
        'providers[3].api_key',
        'agents[0].tool_policy.write',
      ]) {
        expect(paths, expected).toContain(expected);
      }
      for (const problem of error.problems) expect(problem.message.length).toBeGreaterThan(0);
      expect(error.problems.find((problem) => problem.path === 'providers[1].api_key')!.message).toMatch(/NOT_SET_ANYWHERE/);
      expect(error.problems.find((problem) => problem.path === 'surprise')!.message).toMatch(/unknown key/);
      expect(error.param).toBe(`document.${error.problems[0]!.path}`);
      expect(error.message).toContain(`${error.problems.length} problems`);
    }
    // The apply attempt is audited; nothing else changed.
    const after = await snapshot();
    expect({ ...after, audit: before.audit }).toEqual(before);
    expect(auditRows().at(-1)).toMatchObject({ outcome: 'invalid', confirmed: 1 });
  });

  it('refuses a wrong version, a document that is not an object, duplicate names and unknown request fields', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ document: { version: 2 } }, 'version'],
      [{ document: [] }, 'document'],
      [{ document: 'version: 1' }, 'document'],
      [{}, 'document'],
      [{ document: { version: 1 }, dry_run: true }, 'dry_run'],
      [{ document: { version: 1 }, prune: 'yes' }, 'prune'],
    ];
    for (const [body, param] of cases) {
      const response = await post('/admin/config/plan', body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      const error = response.json().error as ErrorWith<{ problems?: ConfigProblem[] }>;
      expect(`${error.param ?? ''} ${JSON.stringify(error.problems ?? [])}`, JSON.stringify(body)).toContain(param);
    }
    const duplicate = await post('/admin/config/plan', { document: { version: 1, providers: [mockProvider('same'), mockProvider('same')] }, prune: true });
    expect(duplicate.statusCode).toBe(400);
    expect(duplicate.json().error.problems).toEqual([expect.objectContaining({ path: 'providers[1].name' })]);
  });

  it('caps the document size (512 KiB by default) with 413', async () => {
    const before = await snapshot();
    const huge = { version: 1, agents: [{ id: 'big', instructions: 'x'.repeat(600 * 1024), tool_policy: { write: 'deny' } }] };
    for (const path of ['/admin/config/plan', '/admin/config/apply'] as const) {
      const response = await post(path, { document: huge, confirm_high_risk: true });
      expect(response.statusCode).toBe(413);
      expect(response.json().error.code).toBe('request_too_large');
    }
    expect(await snapshot()).toEqual(before);
    // Just under the cap is fine.
    const fits = await post('/admin/config/plan', {
      document: { version: 1, agents: [{ id: 'big', instructions: 'x'.repeat(400 * 1024), tool_policy: { write: 'deny' } }] },
    });
    expect(fits.statusCode).toBe(200);
  });

  it('warns (and does not refuse) when an agent names a local model that is not installed, suggesting the one meant', async () => {
    const file = join(services.paths.models, 'tiny.gguf');
    copyFileSync(await tinyModelPath(), file);
    try {
      const planned = await plan({ agents: [{ id: 'helper', model: 'Tiny', tool_policy: { write: 'deny' } }], memory: { model: 'absent' } });
      expect(planned.warnings).toEqual([
        'agents[0].model: the agent "helper" uses the model "Tiny", which is not installed (did you mean "tiny"?); it fails until that model is in a models folder (Models → Discover in the app downloads one).',
        'memory.model: memory uses the model "absent", which is not installed; it fails until that model is in a models folder (Models → Discover in the app downloads one).',
      ]);
      expect((await plan({ agents: [{ id: 'helper', model: 'tiny', tool_policy: { write: 'deny' } }] })).warnings).toEqual([]);
    } finally {
      rmSync(file, { force: true });
    }
  });

  it('accepts a reference to a model of a provider the same document creates', async () => {
    const together = await post('/admin/config/plan', {
      document: { version: 1, providers: [mockProvider('fresh')], agents: [{ id: 'helper', model: 'fresh/mock-small', tool_policy: { write: 'deny' } }] },
    });
    expect(together.statusCode, together.body).toBe(200);
  });

  it('refuses a prune that deletes the provider whose model an agent still names', async () => {
    await apply({ providers: [mockProvider('mock')] });
    await apply({ agents: [{ id: 'helper', model: 'mock/mock-small', tool_policy: { write: 'deny' } }] });
    const dangling = await post('/admin/config/plan', {
      document: { version: 1, agents: [{ id: 'helper', model: 'mock/mock-small', tool_policy: { write: 'deny' } }] },
      prune: true,
    });
    expect(dangling.statusCode, dangling.body).toBe(400);
    expect(dangling.json().error.problems).toEqual([expect.objectContaining({ path: 'agents[0].model' })]);
  });

  it('will not plan listening beyond loopback unless auth is required and a key exists', async () => {
    const noAuth = await post('/admin/config/plan', { document: { version: 1, server: { host: '0.0.0.0' } } });
    expect(noAuth.statusCode).toBe(400);
    expect(noAuth.json().error.problems).toEqual([expect.objectContaining({ path: 'server.auth.required' })]);

    const keyIds = services.keys
      .list()
      .filter((key) => !key.revoked_at)
      .map((key) => key.id);
    for (const id of keyIds) services.keys.revoke(id);
    const noKey = await post('/admin/config/plan', { document: { version: 1, server: { host: '0.0.0.0', auth: { required: true } } } });
    expect(noKey.statusCode).toBe(400);
    expect(noKey.json().error.problems).toEqual([expect.objectContaining({ path: 'server.host' })]);

    services.keys.create({ label: 'remote laptop' });
    const planned = await plan({ server: { host: '0.0.0.0', auth: { required: true } } });
    expect(riskCodes(planned.risks)).toEqual(['listen_beyond_loopback']);
    expect(planned.restart_required).toEqual(['server.host']);
  });

  it('says which changes take effect only after a restart', async () => {
    const planned = await plan({ server: { port: 4999, limits: { admin_body_kb: 1024, request_timeout_seconds: 30, streams_per_key: 3 } } });
    expect(planned.restart_required.sort()).toEqual(['server.limits.admin_body_kb', 'server.limits.request_timeout_seconds', 'server.port']);
  });

  it('normalises memory settings into their ranges', async () => {
    const planned = await apply({ memory: { memory_budget_tokens: 50, salience_floor: 7, episode_retention_days: 10.6 } });
    expect(planned.changes).toEqual([
      { section: 'memory', target: 'memory', action: 'update', fields: ['episode_retention_days', 'memory_budget_tokens', 'salience_floor'] },
    ]);
    expect((await exportedDocument()).memory).toMatchObject({ memory_budget_tokens: 100, salience_floor: 1, episode_retention_days: 11 });
  });
});

describe('POST /admin/config/apply', () => {
  it('applies a low-risk change without confirmation, writes config.yaml and puts it in force', async () => {
    const result = await apply({ models: { parallel: 2 }, server: { limits: { streams_per_key: 3 } } });
    expect(result).toMatchObject({ applied: true, valid: true, risks: [] });
    expect(services.config.models.parallel).toBe(2);
    expect(services.config.server.limits.streams_per_key).toBe(3);
    // The file is edited, not rewritten whole: it loads as the configuration in force.
    const onDisk = loadConfigFile(configFile);
    expect(onDisk).toEqual(services.config);
    expect(await exportedDocument()).toEqual(onDisk);
  });

  it('writes through a temporary file: no temporary is left behind', async () => {
    const before = readdirSync(services.paths.root).sort();
    await apply({ models: { parallel: 3 } });
    expect(readdirSync(services.paths.root).sort()).toEqual(before);
  });

  it('leaves config.yaml and the running configuration untouched when the document is invalid', async () => {
    await apply({ models: { parallel: 2 } });
    const before = await snapshot();
    const running = services.config;
    const response = await post('/admin/config/apply', {
      document: { version: 1, models: { parallel: 3, context_size: 'big' }, server: { cors: { origins: ['http://ok.example'] } } },
      confirm_high_risk: true,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.problems).toEqual([expect.objectContaining({ path: 'models.context_size' })]);
    const after = await snapshot();
    expect(after.file).toBe(before.file);
    expect(after.exported).toBe(before.exported);
    expect(services.config).toBe(running);
    // Valid parts of a refused document are not applied either.
    expect(services.config.models.parallel).toBe(2);
    expect(services.config.server.cors.origins).toEqual([]);
  });

  it('puts the previous file and configuration back when the subsystems cannot take the change', async () => {
    const before = await snapshot();
    const running = services.config;
    // The first call (the change) fails; the second (putting the previous back) runs for real.
    vi.spyOn(services, 'reconfigure').mockImplementationOnce(() => {
      throw new Error('engine refused the settings');
    });
    const response = await post('/admin/config/apply', { document: { version: 1, models: { parallel: 5 } } });
    expect(response.statusCode).toBe(500);
    expect(response.json().error.code).toBe('internal_error');
    expect(response.json().error.message).not.toMatch(/engine refused/);
    const after = await snapshot();
    expect(after.file).toBe(before.file);
    expect(after.exported).toBe(before.exported);
    expect(services.config).toEqual(running);
    expect(auditRows().at(-1)).toMatchObject({ outcome: 'failed' });
  });

  describe('refuses each kind of high-risk change without confirm_high_risk, and applies it with', () => {
    const kinds: { name: string; setup?: () => Promise<void>; document: Record<string, unknown>; prune?: boolean; codes: string[]; check: () => void }[] = [
      {
        name: 'listening beyond loopback',
        setup: async () => void services.keys.create({ label: 'for exposure' }),
        document: { server: { host: '0.0.0.0', auth: { required: true } } },
        codes: ['listen_beyond_loopback'],
        check: () => expect(services.config.server.host).toBe('0.0.0.0'),
      },
      {
        name: 'turning auth off',
        setup: async () => void (await apply({ server: { auth: { required: true } } })),
        document: { server: { auth: { required: false } } },
        codes: ['auth_disabled'],
        check: () => expect(services.config.server.auth.required).toBe(false),
      },
      {
        name: 'widening CORS',
        document: { server: { cors: { origins: ['http://app.example'] } } },
        codes: ['cors_widened'],
        check: () => expect(services.config.server.cors.origins).toEqual(['http://app.example']),
      },
      {
        name: 'widening CORS to any origin',
        document: { server: { cors: { origins: ['*'] } } },
        codes: ['cors_widened'],
        check: () => expect(services.config.server.cors.origins).toEqual(['*']),
      },
      {
        name: 'accepting another Host name',
        document: { server: { allowed_hosts: ['hearth.lan'] } },
        codes: ['hosts_widened'],
        check: () => expect(services.config.server.allowed_hosts).toEqual(['hearth.lan']),
      },
      {
        name: 'deleting by prune',
        setup: async () => void (await apply({ providers: [mockProvider('doomed')] })),
        document: {},
        prune: true,
        codes: ['prune_delete'],
        check: () => expect(services.config.providers).toEqual([]),
      },
      {
        name: 'granting an agent file-write tools',
        document: { agents: [{ id: 'writer', tool_policy: { write: 'ask', exec: 'deny' } }] },
        codes: ['grants_write'],
        check: () => expect(services.config.agents.find((agent) => agent.id === 'writer')?.tool_policy.write).toBe('ask'),
      },
      {
        name: 'granting an agent shell/exec tools',
        document: { agents: [{ id: 'runner', tool_policy: { write: 'deny', exec: 'ask' } }] },
        codes: ['grants_exec'],
        check: () => expect(services.config.agents.find((agent) => agent.id === 'runner')?.tool_policy.exec).toBe('ask'),
      },
      {
        name: 'automatic approval of write tools',
        setup: async () => void (await apply({ agents: [{ id: 'auto', tool_policy: { write: 'ask', exec: 'deny' } }] }, { confirm: true })),
        document: { agents: [{ id: 'auto', tool_policy: { write: 'auto', exec: 'deny' } }] },
        codes: ['automatic_approval'],
        check: () => expect(services.config.agents.find((agent) => agent.id === 'auto')?.tool_policy.write).toBe('auto'),
      },
      {
        name: 'automatic approval of exec tools on a new agent',
        document: { agents: [{ id: 'yolo', tool_policy: { write: 'deny', exec: 'auto' } }] },
        codes: ['automatic_approval', 'grants_exec'],
        check: () => expect(services.config.agents.find((agent) => agent.id === 'yolo')?.tool_policy.exec).toBe('auto'),
      },
      {
        name: 'enabling paid hosted spend',
        document: { images: { hosted: { enabled: true, monthly_budget_usd: 5 } } },
        codes: ['paid_spend'],
        check: () => expect(services.config.images.hosted.enabled).toBe(true),
      },
    ];

    for (const kind of kinds) {
      it(kind.name, async () => {
        await kind.setup?.();
        const planned = await plan(kind.document, kind.prune);
        expect(riskCodes(planned.risks)).toEqual(kind.codes);
        for (const risk of planned.risks) {
          expect(risk.level).toBe('high');
          expect(risk.path.length).toBeGreaterThan(0);
          expect(risk.message.length).toBeGreaterThan(0);
        }

        const before = await snapshot();
        const refused = await post('/admin/config/apply', { document: { version: 1, ...kind.document }, prune: kind.prune ?? false });
        expect(refused.statusCode).toBe(409);
        const error = refused.json().error as ErrorWith<{ risks: ConfigRisk[]; changes: ConfigChange[] }>;
        expect(error.code).toBe('confirmation_required');
        expect(riskCodes(error.risks)).toEqual(kind.codes);
        for (const code of kind.codes) expect(error.message).toContain(code);
        const after = await snapshot();
        expect({ ...after, audit: before.audit }).toEqual(before);
        expect(after.audit).toBe(before.audit + 1);
        expect(auditRows().at(-1)).toMatchObject({ outcome: 'refused', confirmed: 0, prune: kind.prune ? 1 : 0 });
        expect(riskCodes(auditRows().at(-1)!.risks)).toEqual(kind.codes);

        // An explicit false is no confirmation either.
        const explicitFalse = await post('/admin/config/apply', {
          document: { version: 1, ...kind.document },
          prune: kind.prune ?? false,
          confirm_high_risk: false,
        });
        expect(explicitFalse.statusCode).toBe(409);

        const applied = await apply(kind.document, { prune: kind.prune, confirm: true });
        expect(applied.applied).toBe(true);
        expect(riskCodes(applied.risks)).toEqual(kind.codes);
        kind.check();
        expect(loadConfigFile(configFile)).toEqual(services.config);
        expect(auditRows().at(-1)).toMatchObject({ outcome: 'applied', confirmed: 1 });
      });
    }

    it('adding an MCP service that runs a local command (planned and refused only: applying would start it)', async () => {
      const document = { mcp_services: [{ name: 'files', transport: 'stdio', command: process.execPath, args: ['-e', '0'] }] };
      const planned = await plan(document);
      expect(riskCodes(planned.risks)).toContain('runs_local_command');
      expect(planned.risks.find((risk) => risk.code === 'runs_local_command')).toMatchObject({ path: 'mcp_services.files' });
      const before = await snapshot();
      const refused = await post('/admin/config/apply', { document: { version: 1, ...document } });
      expect(refused.statusCode).toBe(409);
      expect(riskCodes((refused.json().error as ErrorWith<{ risks: ConfigRisk[] }>).risks)).toContain('runs_local_command');
      const after = await snapshot();
      expect({ ...after, audit: before.audit }).toEqual(before);
    });

    it('a harmless agent (no write, no exec) needs no confirmation', async () => {
      const result = await apply({ agents: [{ id: 'reader', tool_policy: { write: 'deny', exec: 'deny' } }] });
      expect(result.risks).toEqual([]);
    });

    it('turning auth on, narrowing CORS and disabling paid spend need no confirmation', async () => {
      await apply({ server: { cors: { origins: ['http://a.example', 'http://b.example'] } }, images: { hosted: { enabled: true } } }, { confirm: true });
      const result = await apply({ server: { auth: { required: true }, cors: { origins: ['http://a.example'] } }, images: { hosted: { enabled: false } } });
      expect(result.risks).toEqual([]);
    });
  });

  describe('takes effect without a restart', () => {
    it('a new CORS origin: its preflight succeeds right after', async () => {
      const headers = { origin: 'http://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' };
      expect((await app.inject({ method: 'OPTIONS', url: '/v1/chat/completions', headers })).statusCode).toBe(403);
      await apply({ server: { cors: { origins: ['http://app.example'] } } }, { confirm: true });
      const preflight = await app.inject({ method: 'OPTIONS', url: '/v1/chat/completions', headers });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('http://app.example');
    });

    it('a new provider: its models appear in /v1/models and answer chat', async () => {
      const ids = async () => ((await app.inject({ method: 'GET', url: '/v1/models' })).json() as { data: { id: string }[] }).data.map((model) => model.id);
      expect(await ids()).not.toContain('fresh/mock-small');
      await apply({ providers: [mockProvider('fresh')] });
      expect(await ids()).toEqual(expect.arrayContaining(['fresh/mock-small', 'fresh/mock-large']));
      // On the wire a provider's model says source "provider" (before this release: "remote"), in the list and alone.
      const listed = (await app.inject({ method: 'GET', url: '/v1/models' })).json() as ModelList;
      expect(listed.data.find((model) => model.id === 'fresh/mock-small')).toMatchObject({ source: 'provider', owned_by: 'mock-org' });
      expect((await app.inject({ method: 'GET', url: '/v1/models/fresh/mock-small' })).json()).toMatchObject({ source: 'provider' });
      const chat = await app.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        payload: { model: 'fresh/mock-small', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(chat.statusCode, chat.body).toBe(200);
      expect(chat.body).not.toContain(SECRET_VALUE);
    });

    it('requiring auth: a request without a key is refused right after', async () => {
      expect((await app.inject({ method: 'GET', url: '/v1/models' })).statusCode).toBe(200);
      await apply({ server: { auth: { required: true } } });
      expect((await app.inject({ method: 'GET', url: '/v1/models', remoteAddress: '127.3.0.1' })).statusCode).toBe(401);
      const { key } = services.keys.create({ label: 'after apply' });
      expect((await app.inject({ method: 'GET', url: '/v1/models', headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(200);
    });
  });

  it('records every attempt in the audit log (invalid, refused, applied), and plans record nothing', async () => {
    const start = auditRows().length;
    await plan({ models: { parallel: 2 } });
    expect(auditRows()).toHaveLength(start);
    await post('/admin/config/apply', { document: { version: 1, models: { parallel: -1 } } });
    await post('/admin/config/apply', { document: { version: 1, server: { cors: { origins: ['http://x.example'] } } } });
    await apply({ server: { cors: { origins: ['http://x.example'] } } }, { confirm: true });
    await apply({ models: { parallel: 2 } });
    await apply({}, { prune: true, confirm: true });
    // Refused by the perimeter before it is an attempt: no row.
    await app.inject(asOwner({ method: 'POST', url: '/admin/config/apply', remoteAddress: '203.0.113.9', payload: { document: { version: 1 } } }));
    const rows = auditRows().slice(start);
    expect(rows.map((row) => [row.outcome, row.confirmed, row.prune])).toEqual([
      ['invalid', 0, 0],
      ['refused', 0, 0],
      ['applied', 1, 0],
      ['applied', 0, 0],
      ['applied', 1, 1],
    ]);
    for (const row of rows) expect(row.peer).toBe('127.0.0.1');
    expect(rows[2]!.changes).toEqual([{ section: 'server', target: 'server', action: 'update', fields: ['cors.origins'] }]);
    expect(riskCodes(rows[2]!.risks)).toEqual(['cors_widened']);
    expect(rows[3]!.changes).toEqual([{ section: 'models', target: 'models', action: 'update', fields: ['parallel'] }]);
    const times = rows.map((row) => (services.db.prepare('SELECT at FROM config_audit WHERE id = ?').get(row.id) as { at: number }).at);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });
});
