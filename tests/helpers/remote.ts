import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { stringify } from 'yaml';
import type { PairingCode } from '#shared/api/remote.js';
import { runHearth, type CliResult } from './hearth-cli.js';
import { newDataDir, startServer, type RunningServer } from './server.js';

/*
 * Two real Hearth processes on 127.0.0.1: a host with the secure channel open and agents to
 * grant, and a device that pairs with it through its own CLI.
 */

/** A free TCP port on 127.0.0.1 (for a channel that must keep its port across a restart). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts a host whose configuration opens the secure channel on 127.0.0.1. */
export async function startHost(options: { dataDir?: string; port?: number; config?: Record<string, unknown>; withModel?: boolean } = {}) {
  const dataDir = options.dataDir ?? (await newDataDir(options.withModel ?? false));
  const document = { version: 1, server: { remote: { enabled: true, host: '127.0.0.1', port: options.port ?? 0 } }, ...options.config };
  writeFileSync(join(dataDir, 'config.yaml'), stringify(document));
  return startServer({ dataDir, withModel: false });
}

export async function hearth(server: RunningServer, args: string[]): Promise<CliResult> {
  return runHearth([...args, '--data-dir', server.dataDir]);
}

export async function pairingCode(host: RunningServer, agents: string[] = []): Promise<PairingCode> {
  const result = await hearth(host, ['devices', 'pair', '--json', ...(agents.length ? ['--agents', agents.join(',')] : [])]);
  if (result.code !== 0) throw new Error(`devices pair failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as PairingCode;
}

export async function addRemote(device: RunningServer, name: string, pairing: Pick<PairingCode, 'url' | 'code' | 'fingerprint'>): Promise<CliResult> {
  return hearth(device, ['remote', 'add', name, pairing.url, '--code', pairing.code, '--fingerprint', pairing.fingerprint]);
}

/** A host and a device (no model) paired with it, as `startPaired` gives them. */
export interface PairedCompanions {
  host: RunningServer;
  device: RunningServer;
  /** The pairing code the device used. */
  pairing: PairingCode;
}

/**
 * Starts a host (as `startHost` does) and a device side by side, then pairs the device with the
 * host as `name` (default `home`), the host granting `agents`; throws when the pairing fails.
 */
export async function startPaired(
  options: { port?: number; config?: Record<string, unknown>; agents?: string[]; name?: string } = {},
): Promise<PairedCompanions> {
  const [host, device] = await Promise.all([startHost({ port: options.port, config: options.config }), startServer({ withModel: false })]);
  const pairing = await pairingCode(host, options.agents);
  const added = await addRemote(device, options.name ?? 'home', pairing);
  if (added.code !== 0) throw new Error(`remote add failed: ${added.stderr}`);
  return { host, device, pairing };
}

/** Stops both companions of a pair at once (killed: a paired channel is no reason to wait). */
export async function stopPaired(pair: Partial<Pick<PairedCompanions, 'host' | 'device'>>): Promise<void> {
  await Promise.all([pair.host?.stop('SIGKILL'), pair.device?.stop('SIGKILL')]);
}

/** The host certificate (PEM) from the host's data folder, to trust it in a test's own TLS client. */
export function hostCertificate(host: RunningServer): string {
  return readFileSync(join(host.dataDir, 'remote', 'host-cert.pem'), 'utf8');
}

/** The device credential a paired companion keeps (key, certificate, pinned host certificate). */
export function deviceCredential(device: RunningServer, name: string): { key: string; certificate: string; host_certificate: string; device_id: string } {
  const secrets = JSON.parse(readFileSync(join(device.dataDir, 'secrets.json'), 'utf8')) as Record<string, string>;
  return JSON.parse(secrets[`REMOTE_HOST_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`]!);
}

/** One HTTPS request to a channel with the given client identity (or none). */
export function channelRequest(
  url: string,
  path: string,
  options: { ca: string; key?: string; cert?: string; method?: string; body?: unknown; maxVersion?: 'TLSv1.2' | 'TLSv1.3' },
): Promise<{ status: number; body: any; socket: TLSSocket }> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const outgoing = httpsRequest(
      new URL(path, url),
      {
        method: options.method ?? 'GET',
        agent: false,
        ca: options.ca,
        key: options.key,
        cert: options.cert,
        maxVersion: options.maxVersion,
        checkServerIdentity: () => undefined,
        headers: payload ? { 'content-type': 'application/json' } : {},
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode!, body: text ? JSON.parse(text) : null, socket: response.socket as TLSSocket }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

/** A raw TLS connection with a client identity that stays open until the other side closes it. */
export function openConnection(url: string, identity: { ca: string; key: string; cert: string }): Promise<TLSSocket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), ...identity, checkServerIdentity: () => undefined });
    socket.once('secureConnect', () => resolve(socket));
    socket.once('error', reject);
  });
}
