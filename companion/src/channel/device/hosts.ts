import { hostname } from 'node:os';
import { HearthError } from '../../errors.js';
import type { SecretAccess } from '../../store/secrets.js';
import type { AgentList, AgentRecord } from '#shared/api/agents.js';
import type { RemoteHostSettings } from '#shared/api/config.js';
import type { ErrorBody } from '#shared/api/errors.js';
import type { AddRemoteHostRequest, RemoteHostStatus } from '#shared/api/remote.js';
import { pairWithHost, type HostCredential } from './pair-client.js';
import { ChannelClient } from './tls-client.js';
import { command } from '../../invocation.js';

export interface PairedHostsInputs {
  /** The remote_hosts section in force. */
  hosts(): RemoteHostSettings[];
  /** Where the device credentials are kept. */
  secrets: SecretAccess;
}

/** The secret holding a host's device credential. */
export function credentialSecretName(host: string): string {
  return `REMOTE_HOST_${host.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/**
 * The device side of the secure channel: pairing with hosts, and a pinned, mutually
 * authenticated client per host (kept while its settings and credential stay the same).
 */
export class PairedHosts {
  private readonly clients = new Map<string, { key: string; client: ChannelClient }>();

  constructor(private readonly inputs: PairedHostsInputs) {}

  /** Pairs with a host and stores the credential; returns the remote_hosts entry to put in the configuration. */
  async pair(request: AddRemoteHostRequest): Promise<{ settings: RemoteHostSettings; agents: string[]; deviceId: string }> {
    const url = new URL(request.url);
    if (url.protocol !== 'https:' || url.pathname.replace(/\/+$/, '') !== '' || url.search || url.username)
      throw new HearthError('invalid_request_error', 'The host address must be https://HOST:PORT (as hearth devices pair prints it).', { param: 'url' });
    const paired = await pairWithHost({ url: url.origin, code: request.code, fingerprint: request.fingerprint }, hostname());
    const secret = credentialSecretName(request.name);
    this.inputs.secrets.set(secret, JSON.stringify(paired.credential));
    this.drop(request.name);
    return {
      settings: { name: request.name, url: url.origin, fingerprint: paired.fingerprint, credential: `secret:${secret}` },
      agents: paired.agents,
      deviceId: paired.credential.device_id,
    };
  }

  /** Forgets a host's credential (the configuration entry is removed by the caller). */
  forget(name: string): void {
    this.drop(name);
    this.inputs.secrets.delete(credentialSecretName(name));
  }

  /** The host's granted agents as it lists them. */
  async agents(name: string, signal?: AbortSignal): Promise<AgentRecord[]> {
    const answer = await this.client(name).json<AgentList | ErrorBody>('GET', '/agents', undefined, signal);
    if ('error' in answer.body) throw refusal(name, answer.status, answer.body);
    return answer.body.data;
  }

  async status(name: string): Promise<RemoteHostStatus> {
    const settings = this.settings(name);
    const base = { name, url: settings.url, fingerprint: settings.fingerprint, device_id: this.credential(settings)?.device_id ?? null };
    try {
      const agents = await this.agents(name, AbortSignal.timeout(10_000));
      return { ...base, state: 'connected', message: null, agents: agents.map((agent) => agent.id) };
    } catch (error) {
      if (!(error instanceof HearthError)) throw error;
      const state =
        error.code === 'remote_certificate_changed'
          ? 'certificate_changed'
          : error.code === 'remote_host_not_paired'
            ? 'not_paired'
            : error.code === 'remote_host_unreachable'
              ? 'unreachable'
              : 'refused';
      return { ...base, state, message: error.message, agents: [] };
    }
  }

  /** The mutually authenticated client for a host, made again when its settings or credential change. */
  client(name: string): ChannelClient {
    const settings = this.settings(name);
    const credential = this.credential(settings);
    if (!credential)
      throw new HearthError(
        'remote_host_not_paired',
        `No device credential for "${name}" (${settings.credential} is not set). Pair again: ${command(`remote add ${name} ${settings.url} --code CODE --fingerprint FP`)}`,
      );
    const key = JSON.stringify([settings, credential.certificate]);
    const cached = this.clients.get(name);
    if (cached?.key === key) return cached.client;
    cached?.client.close();
    const client = new ChannelClient({
      url: settings.url,
      fingerprint: settings.fingerprint,
      hostCertificate: credential.host_certificate,
      key: credential.key,
      certificate: credential.certificate,
    });
    this.clients.set(name, { key, client });
    return client;
  }

  close(): void {
    for (const name of [...this.clients.keys()]) this.drop(name);
  }

  /** A configured host's settings; 404 when there is none of that name. */
  settings(name: string): RemoteHostSettings {
    const settings = this.inputs.hosts().find((host) => host.name === name);
    if (!settings) throw new HearthError('remote_host_not_found', `No remote host is named "${name}". List them with: hearth remote list`, { param: 'name' });
    return settings;
  }

  private credential(settings: RemoteHostSettings): HostCredential | undefined {
    const text = this.inputs.secrets.resolve(settings.credential);
    if (!text) return undefined;
    try {
      return JSON.parse(text) as HostCredential;
    } catch {
      return undefined;
    }
  }

  private drop(name: string): void {
    this.clients.get(name)?.client.close();
    this.clients.delete(name);
  }
}

/** A host's refusal, said in terms of what to do about it. */
function refusal(name: string, status: number, body: ErrorBody): HearthError {
  if (status === 401)
    return new HearthError(
      'remote_host_not_paired',
      `The host "${name}" no longer accepts this device (revoked there, or paired again since). To use it again, make a code on the host (${command('devices pair')}) and run ${command(`remote add ${name} URL --code CODE --fingerprint FP`)} here.`,
    );
  return new HearthError('remote_host_refused', `The host "${name}" refused: ${body.error.message}`);
}
