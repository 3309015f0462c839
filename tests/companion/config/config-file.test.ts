import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfigFile } from '../../../companion/src/config/document.js';
import type { Services } from '../../../companion/src/services.js';
import type { ApplyResult, ConfigPlan } from '#shared/api/admin-config.js';
import { asOwner, testApp } from '../../helpers/app.js';
import { newDataDir } from '../../helpers/server.js';

/*
 * The user's config.yaml is theirs: old spellings of renamed keys still load (with a warning that
 * names the new key), and `config apply` edits the file in place instead of rewriting it.
 */

const USER_FILE = `# My Hearth, tuned for the laptop.
version: 1

server:
  port: 4777          # the usual port
  auth: { required: false }

# Memory: a bigger budget than the default.
memory:
  memoryBudgetTokens: 900   # tokens
  salienceFloor: 0.3

mcp_services:
  # The echo service, only on demand.
  - name: everything
    transport: http
    url: http://127.0.0.1:9/mcp
    autoConnect: false       # connect by hand
    discoveryTimeoutMs: 5000
  - name: spare
    transport: http
    url: http://127.0.0.1:9/spare
    autoConnect: false
# The end.
`;

let app: FastifyInstance;
let services: Services;
let close: () => Promise<void>;
let configFile: string;
let dataDir: string;
const warnings: string[] = [];

beforeAll(async () => {
  dataDir = await newDataDir(false);
  configFile = join(dataDir, 'config.yaml');
  writeFileSync(configFile, USER_FILE);
  ({ app, services, close } = await testApp({ dataDir, log: { info() {}, error() {}, warn: (message) => warnings.push(String(message)) } }));
});

afterAll(async () => {
  await close();
});

const original = () => loadConfigFile(configFile);
let saved: ReturnType<typeof original> | undefined;
afterEach(() => {
  writeFileSync(configFile, USER_FILE);
  services.reconfigure((saved ??= original()));
});

async function send(action: 'plan' | 'apply', document: Record<string, unknown>, options: { prune?: boolean; confirm?: boolean } = {}) {
  const response = await app.inject(
    asOwner({
      method: 'POST',
      url: `/admin/config/${action}`,
      payload: {
        document: { version: 1, ...document },
        prune: options.prune ?? false,
        ...(action === 'apply' ? { confirm_high_risk: options.confirm ?? false } : {}),
      },
    }),
  );
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as ConfigPlan & Partial<ApplyResult>;
}

describe('old spellings of renamed keys', () => {
  it('load under their new names with one warning each, naming the new key', () => {
    expect(services.config.memory).toMatchObject({ memory_budget_tokens: 900, salience_floor: 0.3, summary_debounce_seconds: 60 });
    expect(services.config.mcp_services[0]).toMatchObject({ auto_connect: false, discovery_timeout_ms: 5000, tool_call_timeout_ms: 30000 });
    expect(warnings).toHaveLength(5);
    for (const [old, key] of [
      ['memory.memoryBudgetTokens', 'memory.memory_budget_tokens'],
      ['memory.salienceFloor', 'memory.salience_floor'],
      ['mcp_services[0].autoConnect', 'mcp_services[0].auto_connect'],
      ['mcp_services[0].discoveryTimeoutMs', 'mcp_services[0].discovery_timeout_ms'],
      ['mcp_services[1].autoConnect', 'mcp_services[1].auto_connect'],
    ]) {
      expect(warnings.filter((warning) => warning.includes(`${old} is now spelled ${key}`))).toHaveLength(1);
    }
    for (const warning of warnings) expect(warning).toContain(configFile);
  });

  it('the new spelling wins when a file has both, and the warning says the old one is ignored', () => {
    const file = join(dataDir, 'both.yaml');
    writeFileSync(file, 'version: 1\nmemory:\n  salienceFloor: 0.9\n  salience_floor: 0.4\n');
    const heard: string[] = [];
    expect(loadConfigFile(file, (warning) => heard.push(warning)).memory.salience_floor).toBe(0.4);
    expect(heard).toEqual([`${file}: memory.salienceFloor is ignored: memory.salience_floor, its new spelling, is also set. Remove salienceFloor.`]);
  });

  it('plan and apply accept them, report the change under the new key and warn', async () => {
    const planned = await send('plan', { memory: { summaryDebounceSeconds: 120 } });
    expect(planned.changes).toEqual([{ section: 'memory', target: 'memory', action: 'update', fields: ['summary_debounce_seconds'] }]);
    expect(planned.warnings).toEqual([
      'memory.summaryDebounceSeconds is now spelled memory.summary_debounce_seconds; the old spelling still works for now. Rename it.',
    ]);
    const applied = await send('apply', { memory: { summaryDebounceSeconds: 120 } });
    expect(applied.warnings).toEqual(planned.warnings);
    expect(services.config.memory.summary_debounce_seconds).toBe(120);
    expect(readFileSync(configFile, 'utf8')).toContain('  summary_debounce_seconds: 120\n');
  });

  it('retired keys load with a warning naming what replaced them, and apply removes them from the file', async () => {
    const file = join(dataDir, 'retired.yaml');
    writeFileSync(file, 'version: 1\nimages:\n  hosted:\n    enabled: false\n    base_url: https://media.example/v1 # old\n    api_key: secret:MEDIA\n');
    const heard: string[] = [];
    expect(loadConfigFile(file, (warning) => heard.push(warning)).images.hosted).toEqual({ enabled: false, monthly_budget_usd: 0 });
    expect(heard).toEqual([
      `${file}: images.hosted.base_url is no longer used and is ignored: a hosted media endpoint is media_providers[].base_url. Remove it.`,
      `${file}: images.hosted.api_key is no longer used and is ignored: a hosted media key is media_providers[].api_key. Remove it.`,
    ]);
    writeFileSync(configFile, `${USER_FILE}images:\n  hosted:\n    enabled: false\n    base_url: https://media.example/v1\n`);
    const applied = await send('apply', { images: { hosted: { enabled: false, base_url: 'https://media.example/v1' } } });
    expect(applied.warnings).toContain(
      'images.hosted.base_url is no longer used and is ignored: a hosted media endpoint is media_providers[].base_url. Remove it.',
    );
    const text = readFileSync(configFile, 'utf8');
    expect(text).not.toContain('base_url: https://media.example');
    expect(text).toContain('# The end.\n');
    expect(loadConfigFile(configFile)).toEqual(services.config);
  });

  it('a document in the new spelling plans without warnings', async () => {
    expect((await send('plan', { memory: { summary_debounce_seconds: 120 } })).warnings).toEqual([]);
  });
});

describe('config apply edits config.yaml in place', () => {
  it('keeps comments, order and untouched lines, renames old spellings and writes no defaults', async () => {
    await send('apply', { server: { port: 5000 }, models: { parallel: 2 }, memory: { memory_budget_tokens: 1200 } });
    const text = readFileSync(configFile, 'utf8');
    for (const line of [
      '# My Hearth, tuned for the laptop.',
      '  auth: { required: false }',
      '# Memory: a bigger budget than the default.',
      '  salience_floor: 0.3',
      '  # The echo service, only on demand.',
      '    discovery_timeout_ms: 5000',
      '# The end.',
    ]) {
      expect(text).toContain(`${line}\n`);
    }
    expect(text).toMatch(/^ {2}port: 5000 +# the usual port$/m);
    expect(text).toMatch(/^ {2}memory_budget_tokens: 1200 +# tokens$/m);
    expect(text).toMatch(/^ {4}auto_connect: false +# connect by hand$/m);
    expect(text).toContain('models:\n  parallel: 2\n');
    expect(text).not.toMatch(/memoryBudgetTokens|salienceFloor|autoConnect|discoveryTimeoutMs/);
    // Defaults stay unwritten: the file grew by the new section only.
    expect(text).not.toContain('body_limit_mb');
    expect(text).not.toContain('tool_call_timeout_ms');
    expect(text.indexOf('# My Hearth')).toBe(0);
    expect(loadConfigFile(configFile)).toEqual(services.config);
  });

  it('adds a new list item without its defaults, replaces a changed one in place and prunes a removed one', async () => {
    const current = structuredClone(services.config);
    const everything = { ...current.mcp_services[0]!, url: 'http://127.0.0.1:9/other' };
    await send(
      'apply',
      { ...current, mcp_services: [everything], providers: [{ name: 'lab', base_url: 'http://127.0.0.1:9/v1' }] },
      { prune: true, confirm: true },
    );
    const text = readFileSync(configFile, 'utf8');
    expect(text).toContain('  # The echo service, only on demand.\n  - name: everything\n');
    expect(text).toContain('    url: http://127.0.0.1:9/other\n');
    expect(text).not.toContain('spare');
    expect(parse(text).providers).toEqual([{ name: 'lab', base_url: 'http://127.0.0.1:9/v1' }]);
    expect(loadConfigFile(configFile)).toEqual(services.config);
  });

  it('applying the export changes no byte of the file', async () => {
    await send('apply', { memory: { salience_floor: 0.3 } });
    const before = readFileSync(configFile, 'utf8');
    const exported = (await app.inject(asOwner({ method: 'GET', url: '/admin/config/export?format=json' }))).json() as Record<string, unknown>;
    const applied = await send('apply', exported, { prune: true });
    expect(applied.changes).toEqual([]);
    expect(readFileSync(configFile, 'utf8')).toBe(before);
  });

  it('writes the whole document when the file on disk is no longer YAML', async () => {
    writeFileSync(configFile, 'version: 1\nserver: [unclosed\n');
    await send('apply', { models: { parallel: 3 } });
    expect(parse(readFileSync(configFile, 'utf8'))).toEqual(services.config);
    expect(services.config.models.parallel).toBe(3);
  });
});
