import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceList, RemoteHostList } from '#shared/api/remote.js';
import { request as httpsRequest } from 'node:https';
import { CLIENT_PAIRING_TRIES } from '../../companion/src/channel/host/service.js';
import { createDeviceAuthority, createDeviceRequest, signDeviceRequest } from '../../companion/src/channel/x509.js';
import { addRemote, channelRequest, deviceCredential, freePort, hearth, hostCertificate, openConnection, pairingCode, startHost } from '../helpers/remote.js';
import { send, startServer, type RunningServer } from '../helpers/server.js';

/*
 * Pairing end to end between two real `hearth serve` processes on 127.0.0.1 with different data
 * folders: the host opens the secure channel (TLS 1.3, client certificates), the device pairs
 * through its own CLI and companion. Every refusal the channel promises is tried for real.
 */

let host: RunningServer;
let device: RunningServer;
let channelPort: number;

const AGENTS = { agents: [{ id: 'helper' }, { id: 'private' }] };

beforeAll(async () => {
  channelPort = await freePort();
  host = await startHost({ port: channelPort, config: AGENTS });
  device = await startServer({ withModel: false });
});

afterAll(async () => {
  await Promise.all([host?.stop('SIGKILL'), device?.stop('SIGKILL')]);
  for (const server of [host, device]) if (server) rmSync(server.dataDir, { recursive: true, force: true });
});

async function devices(): Promise<DeviceList['data']> {
  return ((await (await fetch(`${host.url}/admin/devices`)).json()) as DeviceList).data;
}

/** POST /pair on the host's channel from another loopback address than the device's companion uses. */
function pairFrom(localAddress: string, body: { code: string; csr: string; name: string }): Promise<{ status: number; body: any; retryAfter?: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const outgoing = httpsRequest(
      `https://127.0.0.1:${channelPort}/pair`,
      {
        method: 'POST',
        localAddress,
        agent: false,
        ca: hostCertificate(host),
        checkServerIdentity: () => undefined,
        headers: { 'content-type': 'application/json' },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () =>
          resolve({ status: response.statusCode!, body: JSON.parse(text), retryAfter: response.headers['retry-after'] as string | undefined }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

async function pairedHosts(): Promise<RemoteHostList['data']> {
  return ((await (await fetch(`${device.url}/admin/remote-hosts`)).json()) as RemoteHostList).data;
}

describe('the secure channel on the host', () => {
  it('creates its host certificate and device CA on first enable, 0600 in a 0700 folder', () => {
    const folder = join(host.dataDir, 'remote');
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    for (const file of ['host-key.pem', 'host-cert.pem', 'device-ca-key.pem', 'device-ca-cert.pem'])
      expect(statSync(join(folder, file)).mode & 0o777).toBe(0o600);
  });

  it('a pairing code comes with the fingerprint and the channel address; unknown agents are refused', async () => {
    const pairing = await pairingCode(host, ['helper']);
    expect(pairing.code).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    expect(pairing.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(pairing.url).toBe(`https://127.0.0.1:${channelPort}`);
    expect(Date.parse(pairing.expires_at)).toBeLessThanOrEqual(Date.now() + 5 * 60_000);
    const unknown = await hearth(host, ['devices', 'pair', '--agents', 'nobody']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No agent here has the id "nobody"/);
  });

  it('speaks TLS 1.3 only: plain HTTP and TLS 1.2 get no answer', async () => {
    await expect(fetch(`http://127.0.0.1:${channelPort}/health`)).rejects.toThrow();
    await expect(channelRequest(`https://127.0.0.1:${channelPort}`, '/health', { ca: hostCertificate(host), maxVersion: 'TLSv1.2' })).rejects.toThrow();
    const tls13 = await channelRequest(`https://127.0.0.1:${channelPort}`, '/health', { ca: hostCertificate(host) });
    expect(tls13.status).toBe(200);
    expect(tls13.socket.getProtocol()).toBe('TLSv1.3');
  });
});

describe('pairing end to end', () => {
  it('pairs: the device checks the fingerprint, sends a CSR with the code, keeps its certificate as a secret', async () => {
    const pairing = await pairingCode(host, ['helper']);
    const added = await addRemote(device, 'home', pairing);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/Paired with home .* as device dev_/);
    expect(added.stdout).toContain('home/helper');

    const [listed] = await pairedHosts();
    expect(listed).toMatchObject({ name: 'home', state: 'connected', agents: ['helper'], fingerprint: pairing.fingerprint });
    const credential = deviceCredential(device, 'home');
    expect(credential.key).toContain('PRIVATE KEY');
    expect(statSync(join(device.dataDir, 'secrets.json')).mode & 0o777).toBe(0o600);

    const paired = (await devices()).find((entry) => entry.id === listed!.device_id)!;
    expect(paired).toMatchObject({ agents: ['helper'], revoked_at: null });
    expect(paired.connections).toBeGreaterThanOrEqual(1);
  });

  it('the device sees only the agents it was granted, and no admin route exists on the channel', async () => {
    const credential = deviceCredential(device, 'home');
    const identity = { ca: hostCertificate(host), key: credential.key, cert: credential.certificate };
    const url = `https://127.0.0.1:${channelPort}`;
    const agents = await channelRequest(url, '/agents', identity);
    expect(agents.status).toBe(200);
    expect(agents.body.data.map((agent: { id: string }) => agent.id)).toEqual(['helper']);
    for (const path of ['/admin/devices', '/admin/config/export', '/v1/models', '/mcp/tools']) {
      const answer = await channelRequest(url, path, identity);
      expect(answer.status, path).toBe(404);
      expect(answer.body.error.code).toBe('route_not_found');
    }
  });

  it('a reused code is refused', async () => {
    const pairing = await pairingCode(host, ['helper']);
    expect((await addRemote(device, 'first', pairing)).code).toBe(0);
    const again = await addRemote(device, 'second', pairing);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already been used/);
    // Forgetting a host removes its entry and its credential.
    expect((await hearth(device, ['remote', 'remove', 'first'])).code).toBe(0);
    expect((await pairedHosts()).map((entry) => entry.name)).not.toContain('first');
    expect(() => deviceCredential(device, 'first')).toThrow();
  });

  it('a wrong code is refused; a client that keeps guessing is stopped before it can burn anyone’s code', async () => {
    const pairing = await pairingCode(host);
    const wrong = await addRemote(device, 'wrong', { ...pairing, code: 'ZZZZ-ZZZZ' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/not valid/);
    // Another client on this machine (127.0.0.2) guesses; past its allowance it is refused outright, even with the right code.
    const { csr } = await createDeviceRequest('guesser');
    for (let attempt = 0; attempt < CLIENT_PAIRING_TRIES; attempt++) {
      const answer = await pairFrom('127.0.0.2', { code: `ZZZZ-ZZZ${attempt}`, csr, name: 'guesser' });
      expect(answer.status).toBe(403);
      expect(answer.body.error.code).toBe('pairing_failed');
    }
    const limited = await pairFrom('127.0.0.2', { code: pairing.code, csr, name: 'guesser' });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limit_exceeded');
    expect(Number(limited.retryAfter)).toBeGreaterThan(0);
    // The device the code was made for still pairs with it.
    const right = await addRemote(device, 'late', pairing);
    expect(right.stderr).toBe('');
    expect(right.code).toBe(0);
    expect((await hearth(device, ['remote', 'remove', 'late'])).code).toBe(0);
  });

  it('an expired code is refused', async () => {
    const pairing = await pairingCode(host);
    // Five minutes pass: the host's own database says so (another connection, as another process would).
    const db = new Database(join(host.dataDir, 'hearth.db'));
    db.pragma('busy_timeout = 5000');
    db.prepare('UPDATE pairing_codes SET expires_at = ? WHERE used_at IS NULL').run(Date.now() - 1);
    db.close();
    const expired = await addRemote(device, 'expired', pairing);
    expect(expired.code).toBe(1);
    expect(expired.stderr).toMatch(/expired/);
  });

  it('a wrong fingerprint stops pairing before anything is sent: the code still works afterwards', async () => {
    const pairing = await pairingCode(host, ['helper']);
    const forged = `${pairing.fingerprint.slice(0, -2)}${pairing.fingerprint.endsWith('00') ? '11' : '00'}`;
    const refused = await addRemote(device, 'spoofed', { ...pairing, fingerprint: forged });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/presented a certificate with fingerprint .* Nothing was sent/);
    expect((await pairedHosts()).map((entry) => entry.name)).not.toContain('spoofed');
    expect((await addRemote(device, 'checked', pairing)).code).toBe(0);
  });

  it('a client certificate from a foreign CA reaches only the pairing route', async () => {
    const foreign = await createDeviceAuthority('elsewhere');
    const request = await createDeviceRequest('intruder');
    const certificate = await signDeviceRequest(request.csr, 'dev_intruder', foreign);
    const identity = { ca: hostCertificate(host), key: request.key, cert: certificate };
    const url = `https://127.0.0.1:${channelPort}`;
    const agents = await channelRequest(url, '/agents', identity);
    expect(agents.status).toBe(401);
    expect(agents.body.error.code).toBe('device_not_paired');
    const pair = await channelRequest(url, '/pair', { ...identity, method: 'POST', body: { code: 'AAAA-AAAA', csr: request.csr, name: 'x' } });
    expect(pair.status).toBe(403);
    expect(pair.body.error.code).toBe('pairing_failed');
    // Without any certificate: the same.
    expect((await channelRequest(url, '/agents', { ca: hostCertificate(host) })).status).toBe(401);
  });
});

describe('revocation and a changed host certificate', () => {
  it('revoking a device closes its open connections at once and refuses it afterwards', async () => {
    const pairing = await pairingCode(host, ['helper']);
    expect((await addRemote(device, 'doomed', pairing)).code).toBe(0);
    const credential = deviceCredential(device, 'doomed');
    const socket = await openConnection(`https://127.0.0.1:${channelPort}`, { ca: hostCertificate(host), key: credential.key, cert: credential.certificate });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const revoked = await hearth(host, ['devices', 'revoke', credential.device_id]);
    expect(revoked.code).toBe(0);
    await closed;
    const status = (await pairedHosts()).find((entry) => entry.name === 'doomed')!;
    expect(status.state).toBe('not_paired');
    expect(status.message).toMatch(/no longer accepts this device/);
    expect((await devices()).find((entry) => entry.id === credential.device_id)).toMatchObject({ connections: 0 });
    expect((await devices()).find((entry) => entry.id === credential.device_id)?.revoked_at).not.toBeNull();
  });

  it('a host that comes back with another certificate is refused with a clear error (no trust on later use)', async () => {
    await host.stop();
    for (const file of ['host-key.pem', 'host-cert.pem']) rmSync(join(host.dataDir, 'remote', file));
    host = await startServer({ dataDir: host.dataDir, withModel: false });
    const status = (await pairedHosts()).find((entry) => entry.name === 'home')!;
    expect(status.state).toBe('certificate_changed');
    expect(status.message).toMatch(/different certificate than the one pinned at pairing/);
    // Running one of its agents is refused before anything is sent, and its agents leave the list.
    const run = await send(device, '/agents/home%2Fhelper/run', { body: { input: 'hello' } });
    expect(run.status).toBe(502);
    expect(((await run.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'remote_certificate_changed',
      message: expect.stringMatching(/pair again/),
    });
    const listed = (await (await fetch(`${device.url}/agents`)).json()) as { data: { id: string }[] };
    expect(listed.data.map((agent) => agent.id)).not.toContain('home/helper');
  });
});
