import { request as httpsRequest, Agent } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { connect, type PeerCertificate } from 'node:tls';
import { HearthError } from '../../errors.js';

/** How this companion reaches one host's secure channel: its pinned certificate, and the device's own. */
export interface ChannelPeer {
  /** https://HOST:PORT */
  url: string;
  /** The SHA-256 fingerprint pinned at pairing; any other certificate is refused. */
  fingerprint: string;
  /** The host certificate (PEM) pinned at pairing: the only trust anchor for this connection. */
  hostCertificate: string;
  /** The device's private key and client certificate (absent while pairing). */
  key?: string;
  certificate?: string;
}

const TLS_VERIFY_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_FINGERPRINT_MISMATCH',
]);

/**
 * Connects without trusting anything and reports the certificate the host presents, so pairing
 * can compare it with the fingerprint the owner read on the host before anything is sent.
 */
export function presentedCertificate(url: string, timeoutMs = 10_000): Promise<{ pem: string; fingerprint: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: hostname.replace(/^\[|\]$/g, ''),
      port: Number(port || 443),
      rejectUnauthorized: false,
      minVersion: 'TLSv1.3',
      timeout: timeoutMs,
    });
    socket.once('secureConnect', () => {
      const certificate = socket.getPeerX509Certificate();
      socket.end();
      if (!certificate) reject(new HearthError('remote_host_unreachable', `${url} presented no certificate.`));
      else resolve({ pem: certificate.toString(), fingerprint: certificate.fingerprint256 });
    });
    socket.once('timeout', () => socket.destroy(new Error('timed out')));
    socket.once('error', (error) => reject(unreachable(url, error)));
  });
}

/** An HTTPS client for one host's channel: TLS 1.3, the pinned host certificate only, the device's certificate. */
export class ChannelClient {
  private readonly agent: Agent;

  constructor(private readonly peer: ChannelPeer) {
    this.agent = new Agent({
      keepAlive: true,
      ca: peer.hostCertificate,
      ...(peer.key && peer.certificate ? { key: peer.key, cert: peer.certificate } : {}),
      minVersion: 'TLSv1.3',
      maxVersion: 'TLSv1.3',
      // Identity is the pinned certificate, not a host name: the address may be any of the host's.
      checkServerIdentity: (_host: string, certificate: PeerCertificate) =>
        certificate.fingerprint256 === peer.fingerprint
          ? undefined
          : Object.assign(new Error('certificate fingerprint mismatch'), { code: 'CERT_FINGERPRINT_MISMATCH' }),
    });
  }

  /** One request; resolves with the response head (stream the body from it). */
  request(method: string, path: string, options: { body?: unknown; signal?: AbortSignal; accept?: string } = {}): Promise<IncomingMessage> {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    return new Promise((resolve, reject) => {
      const outgoing = httpsRequest(
        new URL(path, this.peer.url),
        {
          method,
          agent: this.agent,
          signal: options.signal,
          headers: {
            accept: options.accept ?? 'application/json',
            ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          },
        },
        resolve,
      );
      outgoing.once('error', (error) => reject(this.translate(error)));
      outgoing.end(payload);
    });
  }

  /** A JSON request; resolves with the status and the parsed body. */
  async json<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<{ status: number; body: T }> {
    const response = await this.request(method, path, { body, signal });
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      return { status: response.statusCode ?? 0, body: JSON.parse(text) as T };
    } catch {
      throw new HearthError('remote_host_unreachable', `${this.peer.url} answered ${response.statusCode} with a body that is not JSON.`);
    }
  }

  close(): void {
    this.agent.destroy();
  }

  private translate(error: Error & { code?: string }): Error {
    if (error.name === 'AbortError') return error;
    if (error.code && TLS_VERIFY_CODES.has(error.code)) {
      return new HearthError(
        'remote_certificate_changed',
        `${this.peer.url} presented a different certificate than the one pinned at pairing (${this.peer.fingerprint}). Hearth does not trust a changed certificate: if the host was reinstalled, pair again (hearth devices pair on the host, then hearth remote add).`,
      );
    }
    return unreachable(this.peer.url, error);
  }
}

function unreachable(url: string, error: Error & { code?: string }): HearthError {
  return new HearthError('remote_host_unreachable', `${url} could not be reached over TLS 1.3: ${error.code ?? error.message}.`, { cause: error });
}
