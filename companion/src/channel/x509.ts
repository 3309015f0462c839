import { randomBytes, webcrypto, X509Certificate } from 'node:crypto';
import type * as X509 from '@peculiar/x509';

/*
 * Certificates for the secure channel, made with @peculiar/x509 on Node's WebCrypto: ECDSA P-256
 * keys, SHA-256 signatures. Nothing here implements cryptography; it only fills in certificates.
 */

let library: Promise<typeof X509> | undefined;

/**
 * @peculiar/x509, loaded when a certificate is first made or read: loading it (with tsyringe and
 * its ASN.1 schemas) took about a third of a second at every start, and most starts make none.
 */
function x509Library(): Promise<typeof X509> {
  library ??= (async () => {
    // @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata API.
    await import('reflect-metadata');
    const x509 = await import('@peculiar/x509');
    x509.cryptoProvider.set(webcrypto as unknown as Crypto);
    return x509;
  })();
  return library;
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const TEN_YEARS_MS = 3650 * 86_400_000;

export interface KeyAndCertificate {
  /** PKCS#8 private key, PEM. */
  key: string;
  /** X.509 certificate, PEM. */
  certificate: string;
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  const x509 = await x509Library();
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key as webcrypto.CryptoKey), 'PRIVATE KEY');
}

async function importPrivateKey(pem: string): Promise<CryptoKey> {
  const x509 = await x509Library();
  return (await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(pem), ALGORITHM, false, ['sign'])) as CryptoKey;
}

function serialNumber(): string {
  // Positive, 16 random bytes (RFC 5280 asks for at most 20 octets).
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return bytes.toString('hex');
}

function validity(): { notBefore: Date; notAfter: Date } {
  // A minute of slack for clocks that differ between the two machines.
  return { notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + TEN_YEARS_MS) };
}

/** The device CA: signs the client certificates of paired devices, nothing else. */
export async function createDeviceAuthority(hostName: string): Promise<KeyAndCertificate> {
  const x509 = await x509Library();
  const keys = await generateKeys();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: `CN=Hearth device CA (${escapeName(hostName)})`,
    ...validity(),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { key: await privateKeyPem(keys.privateKey), certificate: certificate.toString('pem') };
}

/** The host's TLS certificate: self-signed, recognised by its fingerprint (pinned by devices), not by a name. */
export async function createHostCertificate(hostName: string, names: string[]): Promise<KeyAndCertificate> {
  const x509 = await x509Library();
  const keys = await generateKeys();
  const alternative = [...new Set(names)].map((name) => ({ type: /^[\d.]+$|:/.test(name) ? ('ip' as const) : ('dns' as const), value: name }));
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: `CN=Hearth host ${escapeName(hostName)}`,
    ...validity(),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(alternative),
    ],
  });
  return { key: await privateKeyPem(keys.privateKey), certificate: certificate.toString('pem') };
}

/** A new device key pair and a certificate signing request for it (client side of pairing). */
export async function createDeviceRequest(deviceName: string): Promise<{ key: string; csr: string }> {
  const x509 = await x509Library();
  const keys = await generateKeys();
  const request = await x509.Pkcs10CertificateRequestGenerator.create({ name: `CN=${escapeName(deviceName)}`, keys, signingAlgorithm: ALGORITHM });
  return { key: await privateKeyPem(keys.privateKey), csr: request.toString('pem') };
}

/** Checks a CSR's own signature (proof the requester holds the key) and issues a client certificate for it. */
export async function signDeviceRequest(csrPem: string, deviceId: string, authority: KeyAndCertificate): Promise<string> {
  const x509 = await x509Library();
  let request: X509.Pkcs10CertificateRequest;
  try {
    request = new x509.Pkcs10CertificateRequest(csrPem);
  } catch {
    throw new CertificateRequestError('The certificate signing request is not a valid PKCS#10 request (PEM).');
  }
  if (!(await request.verify())) throw new CertificateRequestError('The certificate signing request is not signed by its own key.');
  const issuer = new x509.X509Certificate(authority.certificate);
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: `CN=${deviceId}`,
    issuer: issuer.subject,
    ...validity(),
    publicKey: request.publicKey,
    signingKey: await importPrivateKey(authority.key),
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
      await x509.AuthorityKeyIdentifierExtension.create(issuer),
    ],
  });
  return certificate.toString('pem');
}

export class CertificateRequestError extends Error {
  override name = 'CertificateRequestError';
}

/** SHA-256 fingerprint of a PEM certificate as colon-separated upper-case hex (as OpenSSL and Node print it). */
export function fingerprintOf(certificatePem: string): string {
  return new X509Certificate(certificatePem).fingerprint256;
}

/** A fingerprint as a person may type it (any case, with or without colons or spaces), normalised; undefined when it is not one. */
export function normaliseFingerprint(text: string): string | undefined {
  const hex = text.replace(/[\s:]/g, '').toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex)) return undefined;
  return hex.match(/../g)!.join(':');
}

function escapeName(name: string): string {
  return name.replace(/[,+="<>#;\\]/g, ' ').slice(0, 60);
}
