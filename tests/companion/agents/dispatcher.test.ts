import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedApp } from '../../helpers/app.js';

/*
 * One place decides where an agent runs (issue 22, item 3): the dispatcher reads an id once,
 * and the perimeter and the agents routes act on its answer. Here a local agent, a paired host
 * that cannot be reached and a cloud workspace that is not signed in sit side by side.
 */

const source = join(import.meta.dirname, '../../../companion/src');

function files(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(folder, entry.name)) : entry.name.endsWith('.ts') ? [join(folder, entry.name)] : [],
  );
}

describe('the agent id reader', () => {
  it('is called by the dispatcher only: no route, perimeter or source reads agent ids itself', () => {
    const readers = files(source)
      .filter((file) => /\bagentTarget\(/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(source, file))
      .sort();
    expect(readers).toEqual(['access/agent-target.ts', 'agents/dispatcher.ts']);
  });
});

describe('the agent dispatcher', () => {
  const hearth = sharedApp({ withModel: false });

  beforeAll(async () => {
    const { checkDocument } = await import('../../../companion/src/config/document.js');
    const { document } = checkDocument({
      ...structuredClone(hearth.services.config),
      agents: [{ id: 'helper' }],
      remote_hosts: [{ name: 'lab', url: 'https://127.0.0.1:9', fingerprint: Array(32).fill('AB').join(':'), credential: 'secret:REMOTE_HOST_LAB' }],
      cloud_workspaces: [
        { name: 'acme', workspace_id: 'acme', issuer: 'https://login.example.org', client_id: 'hearth', agent_cards: ['https://agents.example.org/card.json'] },
      ],
    });
    hearth.services.reconfigure(document!);
  });

  it('places each kind of id, and nothing that is no agent id', () => {
    expect(hearth.services.dispatcher.place('helper')).toEqual({ kind: 'local', id: 'helper', agent: 'helper' });
    expect(hearth.services.dispatcher.place('lab/helper')).toEqual({ kind: 'host', id: 'lab/helper', host: 'lab', agent: 'helper' });
    expect(hearth.services.dispatcher.place('cloud:acme/writer')).toEqual({ kind: 'cloud', id: 'cloud:acme/writer', workspace: 'acme', agent: 'writer' });
    expect(hearth.services.dispatcher.place('lab%2Fhelper')).toBeUndefined();
  });

  it('lists the local agents, leaving out a host it cannot reach and a workspace not signed in', async () => {
    const response = await hearth.app.inject({ method: 'GET', url: '/agents' });
    expect(response.statusCode).toBe(200);
    expect(response.json().data.map((agent: { id: string }) => agent.id)).toEqual(['helper']);
  });

  it('finds an agent where its id points', async () => {
    expect((await hearth.app.inject({ method: 'GET', url: '/agents/helper' })).json()).toMatchObject({ id: 'helper', source: 'local' });
    for (const id of ['lab%2Fhelper', 'cloud:acme%2Fwriter', 'nobody']) {
      const response = await hearth.app.inject({ method: 'GET', url: `/agents/${id}` });
      expect(response.statusCode, id).toBe(400);
      expect(response.json().error).toMatchObject({ code: 'agent_not_found', param: 'id' });
    }
  });

  it('starts a run where the id points: the host and the workspace refuse, nothing is tried locally', async () => {
    const host = await hearth.app.inject({ method: 'POST', url: '/agents/lab%2Fhelper/run', payload: { input: 'hi' } });
    expect(host.json().error.code).toMatch(/^remote_host_/);
    const cloud = await hearth.app.inject({ method: 'POST', url: '/agents/cloud:acme%2Fwriter/run', payload: { input: 'hi' } });
    expect(cloud.json().error.code).toBe('cloud_sign_in_required');
    const local = await hearth.app.inject({ method: 'POST', url: '/agents/helper/run', payload: { input: 'hi' } });
    expect(local.json().error).toMatchObject({ code: 'invalid_request_error', param: 'id' });
    expect(local.json().error.message).toContain('has no model');
  });

  it('lists the runs recorded here for any agent, and refuses a local agent that does not exist', async () => {
    for (const id of ['helper', 'lab%2Fhelper', 'cloud:acme%2Fwriter']) {
      const response = await hearth.app.inject({ method: 'GET', url: `/agents/${id}/runs` });
      expect(response.statusCode, id).toBe(200);
      expect(response.json()).toMatchObject({ object: 'list', data: [], has_more: false });
    }
    const unknown = await hearth.app.inject({ method: 'GET', url: '/agents/nobody/runs' });
    expect(unknown.json().error).toMatchObject({ code: 'agent_not_found', param: 'id' });
  });
});
