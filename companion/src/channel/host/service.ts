import { networkInterfaces, hostname } from 'node:os';
import type { TLSSocket, TlsOptions } from 'node:tls';
import { FailureLimiter, clientOf } from '../../access/failures.js';
import { HearthError } from '../../errors.js';
import type { Db } from '../../store/database.js';
import type { RemoteChannelSettings } from '#shared/api/config.js';
import type { ChannelStatus, DeviceRecord, PairingCode, PairRequest, PairResponse } from '#shared/api/remote.js';
import { loadOrCreateCertificates, type ChannelCertificates } from './certificates.js';
import { DeviceConnections } from './connections.js';
import { CODE_LIFETIME_MS, DeviceStore, type Device } from './devices.js';
import { CertificateRequestError, fingerprintOf, signDeviceRequest } from '../x509.js';

/**
 * Failed pairings one client may make before it is refused outright: far fewer than burn a code
 * (CODE_TRIES), over twice a code's lifetime, so no single client can spend the codes of others.
 */
export const CLIENT_PAIRING_TRIES = 5;
const CLIENT_WINDOW_MS = 2 * CODE_LIFETIME_MS;

export interface ChannelInputs {
  db: Db;
  /** `<data-dir>/remote`, where the certificates live. */
  folder: string;
  /** The channel settings in force (server.remote). */
  settings(): RemoteChannelSettings;
  /** Ids of the agents this host has, for checking grants. */
  agentIds(): string[];
}

/**
 * The host side of the secure channel: its certificates, the paired devices and pairing, which
 * device each TLS connection belongs to, and revocation that cuts a device's connections at once.
 * The listener itself is started by `hearth serve`; this knows what it needs.
 */
export class ChannelHost {
  readonly devices: DeviceStore;
  private readonly connections = new DeviceConnections();
  private readonly pairingFailures = new FailureLimiter(CLIENT_PAIRING_TRIES, CLIENT_WINDOW_MS);
  private certificates?: ChannelCertificates;
  private address?: { host: string; port: number };

  constructor(private readonly inputs: ChannelInputs) {
    this.devices = new DeviceStore(inputs.db);
  }

  /** Loads the certificates (creating them on first enable) and returns the listener's TLS options: TLS 1.3 only. */
  async prepare(): Promise<TlsOptions> {
    this.certificates ??= await loadOrCreateCertificates(this.inputs.folder, this.inputs.settings().host);
    return {
      key: this.certificates.host.key,
      cert: this.certificates.host.certificate,
      ca: this.certificates.authority.certificate,
      // Ask every client for a certificate but let unpaired ones through to the pairing route.
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.3',
      maxVersion: 'TLSv1.3',
    };
  }

  /** Called by the listener once it is bound. */
  listening(address: { host: string; port: number } | undefined): void {
    this.address = address;
  }

  /** A new TLS connection: when it carries a paired device's certificate, it is counted for that device. */
  attach(socket: TLSSocket): void {
    const device = this.identify(socket);
    if (device) this.connections.add(device.id, socket);
  }

  /** The paired, unrevoked device behind a connection, checked again on every request. */
  deviceOf(socket: TLSSocket): Device | undefined {
    const device = this.identify(socket);
    if (device) this.connections.add(device.id, socket);
    return device;
  }

  status(): ChannelStatus {
    const settings = this.inputs.settings();
    return {
      enabled: settings.enabled,
      listening: this.address !== undefined,
      host: this.address?.host ?? settings.host,
      port: this.address?.port ?? settings.port,
      url: this.address ? this.url(this.address) : null,
      fingerprint: this.certificates?.fingerprint ?? null,
    };
  }

  /** A one-time code for the next device, granting `agents` (which must exist here). */
  pairingCode(agents: string[]): PairingCode {
    if (!this.address || !this.certificates) {
      throw new HearthError(
        'remote_disabled',
        this.inputs.settings().enabled
          ? 'The secure channel is enabled but not listening yet: restart Hearth (hearth serve) to open it.'
          : 'The secure channel is off. Set server.remote.enabled: true (hearth config apply) and restart Hearth, then pair.',
      );
    }
    const known = new Set(this.inputs.agentIds());
    const unknown = agents.filter((agent) => !known.has(agent));
    if (unknown.length > 0)
      throw new HearthError('invalid_request_error', `No agent here has the id ${unknown.map((id) => `"${id}"`).join(', ')}. List them with GET /agents.`, {
        param: 'agents',
      });
    const { code, expiresAt } = this.devices.createCode(agents);
    return { code, fingerprint: this.certificates.fingerprint, url: this.url(this.address), expires_at: new Date(expiresAt).toISOString(), agents };
  }

  /**
   * POST /pair on the channel: a valid code and a CSR give the device its client certificate.
   * `address` is the client's socket address: a client past its allowance of failures is refused
   * before its code is even looked at, so its guesses never count against anyone's code.
   */
  async pair(request: PairRequest, address: string | undefined): Promise<PairResponse> {
    const authority = this.certificates?.authority;
    if (!authority) throw new HearthError('remote_disabled');
    const client = clientOf(address);
    const wait = this.pairingFailures.waitSeconds(client);
    if (wait > 0)
      throw new HearthError('rate_limit_exceeded', `Too many failed pairing attempts from this address. Retry in ${wait} s, with a new code from the host.`, {
        retryAfter: wait,
      });
    // The failure is counted in the same turn of the event loop as the check: parallel guesses cannot slip past it.
    const paired = await this.devices.redeem(
      request.code,
      request.name,
      async (deviceId) => {
        try {
          const certificate = await signDeviceRequest(request.csr, deviceId, authority);
          return { certificate, fingerprint: fingerprintOf(certificate) };
        } catch (error) {
          if (error instanceof CertificateRequestError) throw new HearthError('invalid_request_error', error.message, { param: 'csr' });
          throw error;
        }
      },
      () => this.pairingFailures.record(client),
    );
    return { device_id: paired.deviceId, certificate: paired.certificate, agents: paired.agents };
  }

  list(): DeviceRecord[] {
    return this.devices.list((id) => this.connections.count(id));
  }

  /** Revokes a device and closes its open connections (streams included) at once. */
  revoke(id: string): DeviceRecord {
    const record = this.devices.revoke(id);
    this.connections.close(id);
    return record;
  }

  private identify(socket: TLSSocket): Device | undefined {
    // Only a certificate that chains to this host's device CA counts; its fingerprint names the device.
    if (!socket.authorized) return undefined;
    const fingerprint = socket.getPeerCertificate()?.fingerprint256;
    if (!fingerprint) return undefined;
    return this.devices.deviceFor(fingerprint);
  }

  private url(address: { host: string; port: number }): string {
    const host = ['0.0.0.0', '::'].includes(address.host) ? reachableAddress() : address.host;
    return `https://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  }
}

/** For a wildcard bind: the first non-internal IPv4 address, else the host name. */
function reachableAddress(): string {
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) if (entry.family === 'IPv4' && !entry.internal) return entry.address;
  }
  return hostname();
}
