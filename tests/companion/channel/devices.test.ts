import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HearthError } from '../../../companion/src/errors.js';
import { CODE_LIFETIME_MS, CODE_TRIES, DeviceStore, normaliseCode } from '../../../companion/src/channel/host/devices.js';
import { createDeviceAuthority, createDeviceRequest, fingerprintOf, normaliseFingerprint, signDeviceRequest } from '../../../companion/src/channel/x509.js';
import { openDatabase, type Db } from '../../../companion/src/store/database.js';

/* Pairing codes and device certificates, with a clock the test moves instead of waiting five minutes. */

let folder: string;
let db: Db;
let now = Date.parse('2026-01-01T00:00:00Z');
let store: DeviceStore;
let authority: Awaited<ReturnType<typeof createDeviceAuthority>>;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'hearth-devices-'));
  db = openDatabase(join(folder, 'hearth.db'));
  store = new DeviceStore(db, () => now);
  authority = await createDeviceAuthority('test-host');
});

afterAll(() => {
  db.close();
  rmSync(folder, { recursive: true, force: true });
});

async function redeem(code: string, name = 'laptop') {
  const request = await createDeviceRequest(name);
  return store.redeem(code, name, async (deviceId) => {
    const certificate = await signDeviceRequest(request.csr, deviceId, authority);
    return { certificate, fingerprint: fingerprintOf(certificate) };
  });
}

async function refusal(action: Promise<unknown>): Promise<string> {
  const error = await action.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(HearthError);
  expect((error as HearthError).code).toBe('pairing_failed');
  return (error as HearthError).message;
}

describe('pairing codes', () => {
  it('pair once, granting the agents named when the code was made; the certificate chains to the CA', async () => {
    const { code } = store.createCode(['b', 'a', 'a']);
    const paired = await redeem(code.toLowerCase());
    expect(paired.agents).toEqual(['a', 'b']);
    const certificate = new X509Certificate(paired.certificate);
    expect(certificate.verify(new X509Certificate(authority.certificate).publicKey)).toBe(true);
    expect(certificate.subject).toBe(`CN=${paired.deviceId}`);
    expect(store.deviceFor(certificate.fingerprint256)).toMatchObject({ id: paired.deviceId, agents: ['a', 'b'] });
    expect(await refusal(redeem(code))).toMatch(/already been used/);
  });

  it('expire after five minutes', async () => {
    const { code, expiresAt } = store.createCode([]);
    expect(expiresAt - now).toBe(CODE_LIFETIME_MS);
    now += CODE_LIFETIME_MS;
    expect(await refusal(redeem(code))).toMatch(/expired/);
  });

  it('burn after CODE_TRIES failed attempts, which count against every live code', async () => {
    const first = store.createCode([]);
    const second = store.createCode([]);
    for (let attempt = 0; attempt < CODE_TRIES; attempt++) expect(await refusal(redeem(`WRONG${attempt}`))).toMatch(/not valid/);
    expect(await refusal(redeem(first.code))).toMatch(/burned/);
    expect(await refusal(redeem(second.code))).toMatch(/burned/);
    // A code made after the failures starts with a clean count.
    expect((await redeem(store.createCode([]).code)).deviceId).toMatch(/^dev_/);
  });

  it('a malformed CSR leaves the code usable', async () => {
    const { code } = store.createCode([]);
    const failed = await store
      .redeem(code, 'x', async (deviceId) => {
        const certificate = await signDeviceRequest('not a csr', deviceId, authority);
        return { certificate, fingerprint: fingerprintOf(certificate) };
      })
      .catch((error: unknown) => error);
    expect((failed as Error).name).toBe('CertificateRequestError');
    expect((await redeem(code)).deviceId).toMatch(/^dev_/);
  });

  it('a CSR signed by another key than the one it carries is refused', async () => {
    const one = await createDeviceRequest('one');
    const other = await createDeviceRequest('other');
    // Splice one request's signature onto the other's body: the signature no longer matches.
    const body = (pem: string) => Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    const tampered = Buffer.concat([body(one.csr).subarray(0, 200), body(other.csr).subarray(200)]);
    const pem = `-----BEGIN CERTIFICATE REQUEST-----\n${tampered.toString('base64')}\n-----END CERTIFICATE REQUEST-----`;
    await expect(signDeviceRequest(pem, 'dev_x', authority)).rejects.toThrow(/not (a valid|signed by its own key)/);
  });

  it('revoking a device refuses its certificate from then on', async () => {
    const paired = await redeem(store.createCode(['a']).code);
    const fingerprint = new X509Certificate(paired.certificate).fingerprint256;
    expect(store.revoke(paired.deviceId).revoked_at).not.toBeNull();
    expect(store.deviceFor(fingerprint)).toBeUndefined();
    expect(() => store.revoke('dev_unknown')).toThrow(/No paired device/);
  });
});

describe('codes and fingerprints as people type them', () => {
  it('normalises case, separators and look-alike letters', () => {
    expect(normaliseCode('ab0i-l1o5')).toBe('AB011105');
    const hex = 'ab'.repeat(32);
    expect(normaliseFingerprint(hex)).toBe(Array(32).fill('AB').join(':'));
    expect(normaliseFingerprint(`  ${Array(32).fill('ab').join(':')} `)).toBe(Array(32).fill('AB').join(':'));
    expect(normaliseFingerprint('abc')).toBeUndefined();
  });
});
