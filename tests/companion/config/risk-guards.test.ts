import { readFileSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { dataPaths } from '../../../companion/src/store/data-dir.js';
import { SecretStore } from '../../../companion/src/store/secrets.js';
import { asOwner, sharedApp, testApp } from '../../helpers/app.js';
import { newDataDir } from '../../helpers/server.js';

/*
 * The high-risk guard of plan/apply against the bypasses an outside review found: the exposure
 * judged on the address actually bound (4), every field of a stdio service and every widening
 * of a tool's class (5), and secrets sent to hosts they were not sent to before, or written
 * into URLs (11).
 */

const hearth = sharedApp({
  withModel: false,
  resetConfig: true,
  prepare: async () => {
    const dataDir = await newDataDir(false);
    const secrets = new SecretStore(dataPaths(dataDir).secrets);
    secrets.set('PROVIDER_KEY', 'sk-guard-0123456789abcdef');
    secrets.set('MCP_TOKEN', 'mcp-guard-0123456789abcdef');
    secrets.set('VIDEO_KEY', 'sk-video-0123456789abcdef');
    return { dataDir };
  },
});

async function post(path: 'plan' | 'apply', document: Record<string, unknown>, confirm = false): Promise<LightMyRequestResponse> {
  return hearth.app.inject(
    asOwner({
      method: 'POST',
      url: `/admin/config/${path}`,
      payload: { document: { version: 1, ...document }, ...(path === 'apply' ? { confirm_high_risk: confirm } : {}) },
    }),
  );
}

async function applied(document: Record<string, unknown>): Promise<void> {
  const response = await post('apply', document, true);
  expect(response.statusCode, response.body).toBe(200);
}

/** The risk codes an apply without confirmation is refused for (409), or [] when it was applied. */
async function risksOf(document: Record<string, unknown>): Promise<string[]> {
  const response = await post('apply', document);
  if (response.statusCode === 200) return [];
  expect(response.statusCode, response.body).toBe(409);
  return (response.json() as { error: { risks: { code: string }[] } }).error.risks.map((risk) => risk.code);
}

describe('4: exposure is judged on the address actually bound', () => {
  it('refuses turning auth off while listening on 0.0.0.0, even though the document says 127.0.0.1', async () => {
    // A server of its own: it listens (on a wildcard address, which takes no traffic here).
    const exposed = await testApp({ withModel: false });
    try {
      exposed.services.keys.create({ label: 'exposed' });
      const turnOn = await exposed.app.inject(
        asOwner({
          method: 'POST',
          url: '/admin/config/apply',
          payload: { document: { version: 1, server: { auth: { required: true } } }, confirm_high_risk: true },
        }),
      );
      expect(turnOn.statusCode, turnOn.body).toBe(200);
      await exposed.app.listen({ host: '0.0.0.0', port: 0 });
      expect(exposed.services.config.server.host).toBe('127.0.0.1');
      for (const path of ['plan', 'apply'] as const) {
        const response = await exposed.app.inject(
          asOwner({
            method: 'POST',
            url: `/admin/config/${path}`,
            payload: { document: { version: 1, server: { auth: { required: false } } }, ...(path === 'apply' ? { confirm_high_risk: true } : {}) },
          }),
        );
        expect(response.statusCode, response.body).toBe(400);
        const error = (response.json() as { error: { code: string; problems: { path: string; message: string }[] } }).error;
        expect(error.code).toBe('config_invalid');
        expect(error.problems).toEqual([{ path: 'server.auth.required', message: expect.stringMatching(/0\.0\.0\.0/) }]);
      }
      expect(exposed.services.config.server.auth.required).toBe(true);
      expect(readFileSync(exposed.services.paths.config, 'utf8')).toMatch(/required: true/);
    } finally {
      await exposed.close();
    }
  });

  it('allows it while listening on loopback (the document and the socket agree)', async () => {
    // A key to use: requiring keys with none is refused (lockout.ts).
    hearth.services.keys.create({ label: 'to use' });
    await applied({ server: { auth: { required: true } } });
    expect(await risksOf({ server: { auth: { required: false } } })).toEqual(['auth_disabled']);
  });
});

describe('5: every field of a stdio service, and every widening of what callers see', () => {
  const stdio = { name: 'tools', transport: 'stdio', command: process.execPath, args: ['-e', '0'], enabled: false, auto_connect: false, expose: 'read' };

  it('changing only the env of an approved stdio service is high-risk (NODE_OPTIONS, LD_PRELOAD, PATH)', async () => {
    await applied({ mcp_services: [stdio] });
    for (const env of [{ NODE_OPTIONS: '--require ./evil.cjs' }, { LD_PRELOAD: '/tmp/evil.so' }, { PATH: '/tmp/evil:/usr/bin' }]) {
      expect(await risksOf({ mcp_services: [{ ...stdio, env }] }), JSON.stringify(env)).toContain('runs_local_command');
    }
    expect(hearth.services.config.mcp_services[0]!.env).toEqual({});
  });

  it('any other field that changes what runs is high-risk too; timeouts and switches are not', async () => {
    await applied({ mcp_services: [stdio] });
    expect(await risksOf({ mcp_services: [{ ...stdio, cwd: '/tmp' }] })).toContain('runs_local_command');
    expect(await risksOf({ mcp_services: [{ ...stdio, args: ['-e', '1'] }] })).toContain('runs_local_command');
    expect(await risksOf({ mcp_services: [{ ...stdio, tool_call_timeout_ms: 5000, discovery_timeout_ms: 5000 }] })).toEqual([]);
    expect(await risksOf({ mcp_services: [{ ...stdio, enabled: false, auto_connect: true }] })).toEqual([]);
  });

  it('reclassifying a tool so that more callers may use it is high-risk; narrowing is not', async () => {
    await applied({ mcp_services: [stdio] });
    const widened = await post('apply', { mcp_services: [{ ...stdio, tool_classes: { delete_everything: 'read' } }] });
    expect(widened.statusCode, widened.body).toBe(409);
    const risk = (widened.json() as { error: { risks: { code: string; path: string; message: string }[] } }).error.risks[0]!;
    expect(risk).toMatchObject({ code: 'tool_class_widened', path: 'mcp_services.tools.tool_classes.delete_everything' });
    expect(risk.message).toMatch(/delete_everything/);
    expect(await risksOf({ mcp_services: [{ ...stdio, tool_classes: { fetch: 'network' } }] })).toEqual(['tool_class_widened']);
    expect(await risksOf({ mcp_services: [{ ...stdio, tool_classes: { delete_everything: 'exec' } }] })).toEqual([]);
    expect(hearth.services.config.mcp_services[0]!.tool_classes).toEqual({ delete_everything: 'exec' });
    // exec -> write widens what agents with write allowed may run.
    expect(await risksOf({ mcp_services: [{ ...stdio, tool_classes: { delete_everything: 'write' } }] })).toEqual(['tool_class_widened']);
  });
});

describe('11: a stored secret sent to a new host, and credentials in URLs', () => {
  const remote = { name: 'remote', base_url: 'https://api.remote.example/v1', api_key: 'secret:PROVIDER_KEY', models: ['m'] };
  const video = { name: 'video', base_url: 'https://api.video.example/v1', api_key: 'secret:VIDEO_KEY', models: [{ id: 'sora-2', usd_per_second: 0.1 }] };
  /** An MCP service over HTTP that sends `token` to `url` (disabled: nothing connects). */
  const tokenService = (name: string, url: string, token: string) => ({ name, transport: 'http', url, enabled: false, auth: { type: 'token', token } });

  it('re-pointing a provider that holds a secret at another host is high-risk', async () => {
    await applied({ providers: [remote] });
    expect(await risksOf({ providers: [{ ...remote, base_url: 'https://collector.evil.example/v1' }] })).toEqual(['secret_sent_to_new_host']);
    // The same host with another path is not a new destination.
    expect(await risksOf({ providers: [{ ...remote, base_url: 'https://api.remote.example/v2' }] })).toEqual([]);
  });

  it('attaching a secret the configuration already uses to a new provider or MCP service is high-risk', async () => {
    await applied({ providers: [remote] });
    const copy = { name: 'copy', base_url: 'https://collector.evil.example/v1', api_key: 'secret:PROVIDER_KEY', models: ['m'] };
    expect(await risksOf({ providers: [remote, copy] })).toEqual(['secret_sent_to_new_host']);
    const service = tokenService('leak', 'https://collector.evil.example/mcp', 'secret:PROVIDER_KEY');
    expect(await risksOf({ mcp_services: [service] })).toEqual(['secret_sent_to_new_host']);
  });

  it('re-pointing an MCP service that holds a token is high-risk', async () => {
    const service = tokenService('remote-tools', 'https://tools.example/mcp', 'secret:MCP_TOKEN');
    await applied({ mcp_services: [service] });
    expect(await risksOf({ mcp_services: [{ ...service, url: 'https://collector.evil.example/mcp' }] })).toEqual(['secret_sent_to_new_host']);
  });

  it("a pool endpoint at a new origin for a provider's key is high-risk; one on an origin the key already goes to is not", async () => {
    await applied({ providers: [remote] });
    const pool = (...urls: string[]) => {
      const { base_url: _, ...rest } = remote;
      return { ...rest, endpoints: urls.map((url) => ({ url })) };
    };
    // The same server, now listed as a pool of one, and a second path on it: no new host.
    expect(await risksOf({ providers: [pool('https://api.remote.example/v1')] })).toEqual([]);
    expect(await risksOf({ providers: [pool('https://api.remote.example/v1', 'https://api.remote.example/v2')] })).toEqual([]);
    const planned = await post('plan', { providers: [pool('https://api.remote.example/v1', 'http://10.0.0.9:8000/v1')] });
    expect(planned.statusCode, planned.body).toBe(200);
    expect((planned.json() as { risks: { code: string; message: string }[] }).risks).toEqual([
      expect.objectContaining({ code: 'secret_sent_to_new_host', message: expect.stringContaining('http://10.0.0.9:8000') }),
    ]);
    // Unconfirmed, apply refuses it; confirmed, it is in force.
    expect((await post('apply', { providers: [pool('https://api.remote.example/v1', 'http://10.0.0.9:8000/v1')] })).statusCode).toBe(409);
  });

  it('refuses user:password@ in a pool endpoint, and a provider with both base_url and endpoints, or neither', async () => {
    const response = await post('plan', { providers: [{ name: 'inline', endpoints: [{ url: 'http://10.0.0.5/v1' }, { url: 'http://u:p@10.0.0.6/v1' }] }] });
    expect(response.statusCode, response.body).toBe(400);
    expect((response.json() as { error: { problems: { path: string }[] } }).error.problems).toEqual([
      { path: 'providers[0].endpoints[1].url', message: expect.stringMatching(/user|credential/) },
    ]);
    const both = await post('plan', { providers: [{ name: 'both', base_url: 'http://10.0.0.5/v1', endpoints: [{ url: 'http://10.0.0.6/v1' }] }] });
    expect(both.statusCode).toBe(400);
    expect(both.body).toContain('give base_url or endpoints, not both');
    const neither = await post('plan', { providers: [{ name: 'neither' }] });
    expect(neither.statusCode).toBe(400);
    expect(neither.body).toContain('needs base_url (one server) or endpoints');
    const twice = await post('plan', { providers: [{ name: 'twice', endpoints: [{ url: 'http://10.0.0.5/v1' }, { url: 'http://10.0.0.5/v1/' }] }] });
    expect(twice.statusCode).toBe(400);
    expect(twice.body).toContain('providers[0].endpoints[1].url');
  });

  it('a new provider with a secret nothing used before needs no confirmation', async () => {
    expect(await risksOf({ providers: [remote] })).toEqual([]);
  });

  it('refuses user:password@ in a provider base_url (it would sit in config and exports)', async () => {
    for (const base_url of ['http://user:password@api.example/v1', 'https://token@api.example/v1']) {
      const response = await post('plan', { providers: [{ name: 'inline', base_url }] });
      expect(response.statusCode, response.body).toBe(400);
      const problems = (response.json() as { error: { problems: { path: string; message: string }[] } }).error.problems;
      expect(problems).toEqual([{ path: 'providers[0].base_url', message: expect.stringMatching(/user|credential/) }]);
    }
    const media = await post('plan', { media_providers: [{ ...video, base_url: 'https://u:p@media.example/v1' }] });
    expect(media.statusCode, media.body).toBe(400);
    expect(media.body).toContain('media_providers[0].base_url');
  });

  it("re-pointing a hosted media provider's key at another host is high-risk", async () => {
    await applied({ media_providers: [video] });
    expect(await risksOf({ media_providers: [{ ...video, base_url: 'https://collector.evil.example/v1' }] })).toContain('secret_sent_to_new_host');
    expect(await risksOf({ media_providers: [{ ...video, base_url: 'https://api.video.example/v2' }] })).not.toContain('secret_sent_to_new_host');
  });
});

describe('issue 18, item 14: a cloud workspace’s sign-in sent to a new origin', () => {
  const acme = {
    name: 'acme',
    workspace_id: 'ws-acme',
    issuer: 'https://login.acme.example',
    client_id: 'hearth',
    agent_cards: ['https://agents.acme.example/writer/.well-known/agent-card.json'],
    directory: 'https://agents.acme.example/directory',
  };

  async function planned(document: Record<string, unknown>): Promise<{ code: string; path: string; message: string }[]> {
    const response = await post('plan', document);
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { risks: { code: string; path: string; message: string }[] }).risks;
  }

  it('re-pointing its agent cards or its directory at another origin is high-risk in plan and apply', async () => {
    await applied({ cloud_workspaces: [acme] });
    const cards = { ...acme, agent_cards: ['https://collector.evil.example/card.json'] };
    expect(await planned({ cloud_workspaces: [cards] })).toEqual([
      {
        level: 'high',
        code: 'secret_sent_to_new_host',
        path: 'cloud_workspaces.acme',
        message: expect.stringMatching(/sign-in of cloud workspace "acme".*https:\/\/collector\.evil\.example/),
      },
    ]);
    expect(await risksOf({ cloud_workspaces: [cards] })).toEqual(['secret_sent_to_new_host']);
    expect(hearth.services.config.cloud_workspaces[0]!.agent_cards).toEqual(acme.agent_cards);
    expect(await risksOf({ cloud_workspaces: [{ ...acme, directory: 'https://collector.evil.example/list' }] })).toEqual(['secret_sent_to_new_host']);
    // Adding a card on a new origin next to the old ones sends the token there too.
    expect(await risksOf({ cloud_workspaces: [{ ...acme, agent_cards: [...acme.agent_cards, 'http://127.0.0.1:9/card.json'] }] })).toEqual([
      'secret_sent_to_new_host',
    ]);
    // Confirmed, it is applied.
    expect((await post('apply', { cloud_workspaces: [cards] }, true)).statusCode).toBe(200);
    expect(hearth.services.config.cloud_workspaces[0]!.agent_cards).toEqual(cards.agent_cards);
  });

  it('the same origins (other paths, fewer cards) and a new workspace need no confirmation', async () => {
    await applied({ cloud_workspaces: [acme] });
    expect(await risksOf({ cloud_workspaces: [{ ...acme, agent_cards: ['https://agents.acme.example/other/card.json'] }] })).toEqual([]);
    expect(await risksOf({ cloud_workspaces: [{ ...acme, directory: undefined }] })).toEqual([]);
    expect(await risksOf({ cloud_workspaces: [acme, { ...acme, name: 'globex', agent_cards: ['https://agents.globex.example/card.json'] }] })).toEqual([]);
  });
});
