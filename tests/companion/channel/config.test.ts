import { describe, expect, it } from 'vitest';
import { checkDocument } from '../../../companion/src/config/document.js';
import { planChange } from '../../../companion/src/config/plan.js';
import type { ConfigDocument } from '#shared/api/config.js';
import { runHearth } from '../../helpers/hearth-cli.js';

/* The configuration of the two outward agent directions: server.remote, remote_hosts, cloud_workspaces. */

const FINGERPRINT = Array(32).fill('AB').join(':');
const host = { name: 'home', url: 'https://192.168.1.5:4778', fingerprint: FINGERPRINT, credential: 'secret:REMOTE_HOST_HOME' };
const workspace = { name: 'acme', workspace_id: 'acme', issuer: 'https://login.example.org', client_id: 'hearth' };

function problems(document: Record<string, unknown>): string[] {
  return checkDocument({ version: 1, ...document }).problems;
}

describe('configuration', () => {
  it('fills in defaults: the channel off on 0.0.0.0:4778, cloud sign-in with the authorization code and openid scopes', () => {
    const { document } = checkDocument({ version: 1, cloud_workspaces: [workspace] });
    expect(document!.server.remote).toEqual({ enabled: false, host: '0.0.0.0', port: 4778 });
    expect(document!.remote_hosts).toEqual([]);
    expect(document!.cloud_workspaces[0]).toMatchObject({
      grant: 'authorization_code',
      scopes: ['openid', 'offline_access'],
      workspace_claim: 'workspace_id',
      agent_cards: [],
    });
  });

  it('takes a remote host only with an https origin, a full fingerprint and a secret credential', () => {
    expect(problems({ remote_hosts: [host] })).toEqual([]);
    expect(problems({ remote_hosts: [{ ...host, url: 'http://192.168.1.5:4778' }] })).toEqual([expect.stringMatching(/^remote_hosts\[0\]\.url/)]);
    expect(problems({ remote_hosts: [{ ...host, url: 'https://me:pw@host:1' }] })).toEqual([expect.stringMatching(/^remote_hosts\[0\]\.url/)]);
    expect(problems({ remote_hosts: [{ ...host, fingerprint: 'AB:CD' }] })).toEqual([expect.stringMatching(/^remote_hosts\[0\]\.fingerprint/)]);
    expect(problems({ remote_hosts: [{ ...host, credential: 'env:X' }] })).toEqual([expect.stringMatching(/^remote_hosts\[0\]\.credential/)]);
    expect(problems({ remote_hosts: [{ ...host, credential: 'the-key-itself' }] })).toEqual([expect.stringMatching(/^remote_hosts\[0\]\.credential/)]);
    expect(problems({ remote_hosts: [host, host] })).toEqual(['remote_hosts[1].name: "home" is used by an earlier host']);
  });

  it('sends workspace tokens over plain http only on this machine', () => {
    expect(problems({ cloud_workspaces: [{ ...workspace, issuer: 'http://127.0.0.1:9000' }] })).toEqual([]);
    expect(problems({ cloud_workspaces: [{ ...workspace, issuer: 'http://login.example.org' }] })).toEqual([
      'cloud_workspaces[0].issuer: must be https:// (plain http only for this machine); tokens are sent there',
    ]);
    expect(problems({ cloud_workspaces: [{ ...workspace, agent_cards: ['http://agents.example.org/card.json'] }] })).toEqual([
      expect.stringMatching(/^cloud_workspaces\[0\]\.agent_cards\[0\]: must be https/),
    ]);
    expect(problems({ cloud_workspaces: [{ ...workspace, client_secret: 'plain-secret' }] })).toEqual([expect.stringMatching(/client_secret/)]);
  });

  it('enabling the secure channel is high-risk and needs a restart', () => {
    const current = checkDocument({ version: 1 }).document as ConfigDocument;
    const result = planChange({ version: 1, server: { remote: { enabled: true } } }, false, {
      current,
      resolves: () => true,
      localModels: new Set(),
      activeKeys: 0,
    });
    expect(result.plan!.risks.map((risk) => risk.code)).toEqual(['remote_channel']);
    expect(result.plan!.restart_required).toEqual(['server.remote.enabled']);
  });

  it('every new subcommand answers --help with its usage', async () => {
    for (const command of ['devices', 'remote', 'cloud']) {
      const result = await runHearth([command, '--help']);
      expect(result.code, command).toBe(0);
      // Spelled as a clone runs it: the tests take any npm-linked `hearth` off the PATH.
      expect(result.stdout, command).toMatch(new RegExp(`^Usage:\\n  npm run hearth -- ${command} `));
    }
  });
});
