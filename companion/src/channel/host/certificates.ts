import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../../store/files.js';
import { createDeviceAuthority, createHostCertificate, fingerprintOf, type KeyAndCertificate } from '../x509.js';

/** The host's TLS identity and the CA that signs paired devices' certificates. */
export interface ChannelCertificates {
  host: KeyAndCertificate;
  authority: KeyAndCertificate;
  /** SHA-256 fingerprint of the host certificate, what devices pin. */
  fingerprint: string;
}

const FILES = { hostKey: 'host-key.pem', hostCertificate: 'host-cert.pem', authorityKey: 'device-ca-key.pem', authorityCertificate: 'device-ca-cert.pem' };

/**
 * Reads the channel's certificates from `<data-dir>/remote/`, creating them the first time the
 * channel is enabled. Private keys and certificates are written 0600 in a 0700 folder; they are
 * made once and kept, so devices' pins and certificates stay valid across restarts.
 */
export async function loadOrCreateCertificates(folder: string, boundHost: string): Promise<ChannelCertificates> {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  chmodSync(folder, 0o700);
  const path = (name: keyof typeof FILES) => join(folder, FILES[name]);
  if (!existsSync(path('hostKey')) || !existsSync(path('hostCertificate'))) {
    const names = ['localhost', '127.0.0.1', '::1', hostname(), ...(['0.0.0.0', '::'].includes(boundHost) ? [] : [boundHost])];
    const host = await createHostCertificate(hostname(), names);
    writeFileAtomic(path('hostKey'), host.key, 0o600);
    writeFileAtomic(path('hostCertificate'), host.certificate, 0o600);
  }
  if (!existsSync(path('authorityKey')) || !existsSync(path('authorityCertificate'))) {
    const authority = await createDeviceAuthority(hostname());
    writeFileAtomic(path('authorityKey'), authority.key, 0o600);
    writeFileAtomic(path('authorityCertificate'), authority.certificate, 0o600);
  }
  const read = (name: keyof typeof FILES) => {
    chmodSync(path(name), 0o600);
    return readFileSync(path(name), 'utf8');
  };
  const host = { key: read('hostKey'), certificate: read('hostCertificate') };
  return { host, authority: { key: read('authorityKey'), certificate: read('authorityCertificate') }, fingerprint: fingerprintOf(host.certificate) };
}
