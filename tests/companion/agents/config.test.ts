import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { checkDocument, loadConfigFile } from '../../../companion/src/config/document.js';
import { checkAgentId } from '../../../companion/src/memory/validate.js';
import { asOwner, testApp } from '../../helpers/app.js';
import { newDataDir } from '../../helpers/server.js';

describe('agent definitions in the configuration document', () => {
  it('fills in the defaults', () => {
    const { document } = checkDocument({ version: 1, agents: [{ id: 'helper' }] });
    expect(document!.agents[0]).toEqual({
      id: 'helper',
      tools: [],
      tool_policy: { read: 'auto', write: 'deny', exec: 'deny', network: 'ask' },
      tool_overrides: {},
      tool_choice: 'auto',
      memory: { enabled: true },
      max_steps: 30,
    });
    expect(document!.agents_defaults).toEqual({ approval_timeout_seconds: 600, shell_timeout_seconds: 60, tool_output_kb: 64 });
  });

  it('uses one id rule for agents and memory, and reserves the routes’ own words', () => {
    const problems = (id: string) => checkDocument({ version: 1, agents: [{ id }] }).problems;
    for (const id of ['helper', 'Helper.v2', 'a_b-c', '_x', 'x'.repeat(100)]) {
      expect(problems(id), id).toEqual([]);
      expect(checkAgentId(id)).toBe(id);
    }
    for (const id of ['', '.', '..', '.hidden', 'a/b', 'a b', 'x'.repeat(101), 'runs', 'approvals']) {
      expect(problems(id).length, id).toBeGreaterThan(0);
      // The routes' own words are well-formed ids (memory takes them) that the agents' settings
      // refuse; the rest are malformed everywhere.
      const memoryRefuses = (() => {
        try {
          checkAgentId(id);
          return false;
        } catch {
          return true;
        }
      })();
      expect(memoryRefuses, id).toBe(!['runs', 'approvals'].includes(id));
    }
  });

  it('refuses out-of-range settings, each with its path', () => {
    const { problems } = checkDocument({
      version: 1,
      agents: [{ id: 'a', max_steps: 121, temperature: 3, workspace: 'relative/path', tool_overrides: { shell: 'sometimes' }, memory: { budget_tokens: 50 } }],
      agents_defaults: { approval_timeout_seconds: 0 },
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^agents\[0\]\.max_steps: /),
        expect.stringMatching(/^agents\[0\]\.temperature: /),
        expect.stringMatching(/^agents\[0\]\.workspace: /),
        expect.stringMatching(/^agents\[0\]\.tool_overrides\.shell: /),
        expect.stringMatching(/^agents\[0\]\.memory\.budget_tokens: /),
        expect.stringMatching(/^agents_defaults\.approval_timeout_seconds: /),
      ]),
    );
  });
});

describe('plan and apply of agents', () => {
  let app: Awaited<ReturnType<typeof testApp>>;
  const workspace = mkdtempSync(join(tmpdir(), 'hearth-plan-ws-'));

  beforeAll(async () => {
    app = await testApp({ withModel: false });
  });

  afterAll(async () => {
    await app?.close();
  });

  const plan = (agents: Record<string, unknown>[]) =>
    app.app.inject(asOwner({ method: 'POST', url: '/admin/config/plan', payload: { document: { version: 1, agents } } })).then((response) => response.json());

  it('calls an override that allows or automates a write or exec tool high-risk, and a workspace the file tools reach', async () => {
    const result = await plan([
      { id: 'overrides', tools: ['shell', 'write_file'], tool_overrides: { shell: 'ask', write_file: 'auto', current_time: 'auto' } },
      { id: 'files', tools: ['read_file'], workspace },
      { id: 'no-files', tools: ['current_time'], workspace },
    ]);
    const risks = result.risks.map((risk: { code: string; path: string }) => `${risk.code} ${risk.path}`).sort();
    expect(risks).toEqual([
      'automatic_approval agents.overrides.tool_overrides.write_file',
      'grants_exec agents.overrides.tool_overrides.shell',
      `grants_workspace agents.files.workspace`,
      'grants_write agents.overrides.tool_overrides.write_file',
    ]);
  });

  it('refuses a workspace that is not an existing folder', async () => {
    const result = await plan([{ id: 'lost', workspace: join(workspace, 'missing') }]);
    expect(result.error.code).toBe('config_invalid');
    expect(result.error.problems).toEqual([{ path: 'agents[0].workspace', message: `${join(workspace, 'missing')} is not an existing folder` }]);
  });

  it('an applied agent is listed and runnable at once', async () => {
    const applied = await app.app.inject(
      asOwner({
        method: 'POST',
        url: '/admin/config/apply',
        payload: { document: { version: 1, agents: [{ id: 'fresh', name: 'Fresh', tools: ['current_time'] }] } },
      }),
    );
    expect(applied.statusCode).toBe(200);
    expect((await app.app.inject({ method: 'GET', url: '/agents/fresh' })).json()).toMatchObject({ id: 'fresh', name: 'Fresh' });
  });
});

describe('agents in config.yaml', () => {
  const USER_FILE = `version: 1
# My agents.
agents:
  - id: helper          # the one I use most
    name: Helper
    instructions: Be brief.
    tools: [current_time]
    tool_overrides: { current_time: ask }
`;
  let app: Awaited<ReturnType<typeof testApp>>;
  let configFile: string;

  beforeAll(async () => {
    const dataDir = await newDataDir(false);
    configFile = join(dataDir, 'config.yaml');
    writeFileSync(configFile, USER_FILE);
    app = await testApp({ dataDir, withModel: false });
  });

  afterAll(async () => {
    await app?.close();
  });

  it('apply edits the agents in place: comments stay, a new agent is written without its defaults, and the file loads as what was applied', async () => {
    const current = structuredClone(app.services.config);
    const [helper] = current.agents;
    const agents = [
      { ...helper, instructions: 'Be very brief.', tool_overrides: {} },
      { id: 'second', name: 'Second', tools: ['current_time'], max_steps: 12 },
    ];
    const applied = await app.app.inject(asOwner({ method: 'POST', url: '/admin/config/apply', payload: { document: { ...current, agents }, prune: true } }));
    expect(applied.statusCode, applied.body).toBe(200);
    const text = readFileSync(configFile, 'utf8');
    expect(text).toContain('# My agents.');
    expect(text).toMatch(/- id: helper +# the one I use most\n/);
    expect(text).toContain('instructions: Be very brief.');
    expect(text).not.toContain('current_time: ask');
    // The new agent carries only what differs from the defaults.
    const second = (parse(text) as { agents: Record<string, unknown>[] }).agents[1];
    expect(second).toEqual({ id: 'second', name: 'Second', tools: ['current_time'], max_steps: 12 });
    expect(loadConfigFile(configFile)).toEqual(app.services.config);
    expect(app.services.config.agents.map((agent) => [agent.id, agent.max_steps, agent.tool_overrides])).toEqual([
      ['helper', 30, {}],
      ['second', 12, {}],
    ]);
  });
});
