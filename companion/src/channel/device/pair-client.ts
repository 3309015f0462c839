import { createPrivateKey, X509Certificate } from 'node:crypto';
import { HearthError } from '../../errors.js';
import type { ErrorBody } from '#shared/api/errors.js';
import type { PairResponse } from '#shared/api/remote.js';
import { ChannelClient, presentedCertificate } from './tls-client.js';
import { createDeviceRequest, normaliseFingerprint } from '../x509.js';

/** What a device keeps for one host (as one secret, JSON): its key and certificate, and the pinned host certificate. */
export interface HostCredential {
  device_id: string;
  key: string;
  certificate: string;
  host_certificate: string;
}

/**
 * The device side of pairing: check the host's certificate against the fingerprint the owner
 * read on the host (before sending anything), make a key pair here (the private key never
 * leaves), send a CSR with the one-time code, and check the certificate that comes back.
 */
export async function pairWithHost(target: { url: string; code: string; fingerprint: string }, deviceName: string) {
  const expected = normaliseFingerprint(target.fingerprint);
  if (!expected)
    throw new HearthError('invalid_request_error', 'The fingerprint must be 64 hex digits (colons optional), as hearth devices pair shows it.', {
      param: 'fingerprint',
    });
  const presented = await presentedCertificate(target.url);
  if (presented.fingerprint !== expected) {
    throw new HearthError(
      'fingerprint_mismatch',
      `${target.url} presented a certificate with fingerprint ${presented.fingerprint}, not ${expected}. Nothing was sent. Check the fingerprint hearth devices pair shows on the host; if it matches what you typed, something between the two machines is answering in its place.`,
      { param: 'fingerprint' },
    );
  }
  const { key, csr } = await createDeviceRequest(deviceName);
  const client = new ChannelClient({ url: target.url, fingerprint: expected, hostCertificate: presented.pem });
  try {
    const answer = await client.json<PairResponse | ErrorBody>('POST', '/pair', { code: target.code, csr, name: deviceName });
    if (answer.status !== 201 || !('certificate' in answer.body)) {
      const message = 'error' in answer.body ? answer.body.error.message : `The host answered ${answer.status}.`;
      throw new HearthError('pairing_failed', `The host refused to pair: ${message}`);
    }
    const issued = new X509Certificate(answer.body.certificate);
    if (!issued.checkPrivateKey(createPrivateKey(key))) throw new HearthError('pairing_failed', 'The host returned a certificate for another key.');
    const credential: HostCredential = { device_id: answer.body.device_id, key, certificate: answer.body.certificate, host_certificate: presented.pem };
    return { credential, fingerprint: expected, agents: answer.body.agents };
  } finally {
    client.close();
  }
}
