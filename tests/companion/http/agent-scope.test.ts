import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { agentTarget, scopeAllowsAgent } from '../../../companion/src/access/agent-target.js';
import type { DrivenOutcome } from '../../../companion/src/agents/driven-run.js';
import { sharedApp } from '../../helpers/app.js';

/*
 * A key scoped to one agent uses exactly that local agent (issue 18, item 5). A paired host or a
 * cloud workspace may carry the same name as the key's agent: `/agents/helper%2Fsheller/run`
 * names the host "helper"'s agent "sheller", never the local "helper". The perimeter checks the
 * id the route resolves (decoded by the router), so every encoding of a path is judged the same.
 */

const hearth = sharedApp({ withModel: false });
let scoped: string;
let unscoped: string;

const FINGERPRINT = Array(32).fill('AB').join(':');

beforeAll(async () => {
  const { document } = await import('../../../companion/src/config/document.js').then(({ checkDocument }) =>
    checkDocument({
      ...structuredClone(hearth.services.config),
      agents: [{ id: 'helper' }],
      // A paired host named like the key's agent (unreachable: nothing may get that far).
      remote_hosts: [{ name: 'helper', url: 'https://127.0.0.1:9', fingerprint: FINGERPRINT, credential: 'secret:REMOTE_HOST_HELPER' }],
    }),
  );
  hearth.services.reconfigure(document!);
  scoped = hearth.services.keys.create({ label: 'helper only', agent: 'helper' }).key;
  unscoped = hearth.services.keys.create({ label: 'any agent' }).key;
});

const as = (key: string) => ({ authorization: `Bearer ${key}` });

function refused(response: LightMyRequestResponse, url: string): void {
  expect(response.statusCode, `${url}: ${response.body.slice(0, 300)}`).toBe(403);
  expect(response.json().error).toMatchObject({ code: 'permission_denied', param: 'id' });
}

describe('the agent id parser the perimeter and the routes share', () => {
  it('tells local, paired-host and cloud agents apart, and refuses anything else', () => {
    expect(agentTarget('helper')).toEqual({ kind: 'local', id: 'helper', agent: 'helper' });
    expect(agentTarget('helper/sheller')).toEqual({ kind: 'host', id: 'helper/sheller', host: 'helper', agent: 'sheller' });
    expect(agentTarget('cloud:helper/writer')).toEqual({ kind: 'cloud', id: 'cloud:helper/writer', workspace: 'helper', agent: 'writer' });
    for (const id of ['', 'helper%2Fsheller', 'a/b/c', 'cloud:helper', 'cloud:/x', 'Helper/x', '/x', 'x/', '.hidden', 'runs/../x']) {
      expect(agentTarget(id), id).toBeUndefined();
    }
  });

  it('lets a scoped key use only its own local agent', () => {
    expect(scopeAllowsAgent('helper', agentTarget('helper'))).toBe(true);
    for (const id of ['helper/sheller', 'cloud:helper/helper', 'helper/helper', 'other', 'HELPER', 'helper%2Fsheller'])
      expect(scopeAllowsAgent('helper', agentTarget(id)), id).toBe(false);
    expect(scopeAllowsAgent(null, agentTarget('helper/sheller'))).toBe(true);
  });
});

describe('a key scoped to agent "helper" and a paired host named "helper"', () => {
  const foreign = [
    'helper%2Fsheller',
    'helper%2fsheller',
    'helper%2Fhelper',
    'cloud%3Ahelper%2Fhelper',
    'cloud:helper%2Fhelper',
    // "runs" is a reserved path word, never an exemption: this names host "runs"'s agent.
    'runs%2Frun_x',
    // Double-encoded: the route sees "helper%2Fsheller", which is no agent id at all.
    'helper%252Fsheller',
  ];

  it('is refused every other agent through every agent route, however the path is encoded', async () => {
    for (const id of foreign) {
      for (const [method, url] of [
        ['POST', `/agents/${id}/run`],
        ['GET', `/agents/${id}`],
        ['GET', `/agents/${id}/runs`],
      ] as const) {
        refused(await hearth.app.inject({ method, url, headers: as(scoped), ...(method === 'POST' ? { payload: { input: 'run ls' } } : {}) }), url);
      }
    }
  });

  it('still reaches its own agent, by any spelling of its path that the router decodes to it', async () => {
    for (const url of ['/agents/helper', '/agents/%68elper', '/agents/helper/runs']) {
      const response = await hearth.app.inject({ method: 'GET', url, headers: as(scoped) });
      expect(response.statusCode, `${url}: ${response.body.slice(0, 300)}`).toBe(200);
    }
  });

  it('a key for every agent passes the perimeter for the host’s agent (the host then decides)', async () => {
    const response = await hearth.app.inject({ method: 'POST', url: '/agents/helper%2Fsheller/run', headers: as(unscoped), payload: { input: 'hi' } });
    expect([401, 403]).not.toContain(response.statusCode);
  });

  it('cannot read, follow or cancel a run of the host’s agent', async () => {
    let release!: () => void;
    const { run } = hearth.services.agents.startDriven(
      { agentId: 'helper/sheller', model: 'helper/sheller', input: [{ role: 'user', content: 'hi' }] },
      (effects) =>
        new Promise<DrivenOutcome>((resolve) => {
          release = () => resolve({ status: 'completed', outputText: 'done', steps: [], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } });
          effects.signal.addEventListener('abort', release, { once: true });
        }),
    );
    for (const [method, url] of [
      ['GET', `/agents/runs/${run.id}`],
      ['GET', `/agents/runs/${run.id}/events`],
      ['POST', `/agents/runs/${run.id}/cancel`],
    ] as const) {
      const response = await hearth.app.inject({ method, url, headers: as(scoped) });
      expect(response.statusCode, url).toBe(404);
      expect(response.json().error.code).toBe('run_not_found');
    }
    expect(hearth.services.agents.get(run.id).status).toBe('running');
    expect((await hearth.app.inject({ method: 'GET', url: `/agents/runs/${run.id}`, headers: as(unscoped) })).statusCode).toBe(200);
    release();
  });
});
