import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { clientOf } from '../../../companion/src/access/failures.js';
import { CLIENT_PAIRING_TRIES } from '../../../companion/src/channel/host/service.js';
import { CODE_TRIES } from '../../../companion/src/channel/host/devices.js';
import { createDeviceRequest } from '../../../companion/src/channel/x509.js';
import { buildChannelApp } from '../../../companion/src/channel-app.js';
import type { Services } from '../../../companion/src/services.js';
import { testApp } from '../../helpers/app.js';
import { newDataDir } from '../../helpers/server.js';

/*
 * Pairing guesses are counted per client first (issue 18, item 12): a client past its allowance
 * is refused before its guess touches any code, so one address can no longer burn every live
 * code with a handful of wrong guesses. The secure channel's own app, through inject with
 * forged peer addresses.
 */

let services: Services;
let close: () => Promise<void>;
let channel: FastifyInstance;
let csr: string;

beforeAll(async () => {
  const dataDir = await newDataDir(false);
  writeFileSync(join(dataDir, 'config.yaml'), stringify({ version: 1, server: { remote: { enabled: true, host: '127.0.0.1', port: 0 } } }));
  ({ services, close } = await testApp({ dataDir, withModel: false }));
  const tls = await services.channel.prepare();
  services.channel.listening({ host: '127.0.0.1', port: 4778 });
  channel = await buildChannelApp({ services, tls });
  csr = (await createDeviceRequest('laptop')).csr;
});

afterAll(async () => {
  await channel?.close();
  await close();
});

const pair = (code: string, remoteAddress: string): Promise<LightMyRequestResponse> =>
  channel.inject({ method: 'POST', url: '/pair', remoteAddress, payload: { code, csr, name: 'laptop' } });

let wrong = 0;
/** A code no one was given. */
const guess = () => `ZZZZ-${String(wrong++).padStart(4, '0')}`;

function expectCode(response: LightMyRequestResponse, status: number, code: string): void {
  expect(response.statusCode, response.body.slice(0, 300)).toBe(status);
  expect(response.json().error.code).toBe(code);
}

describe('pairing failures are counted per client first', () => {
  it('one address guessing cannot burn another device’s code: it is refused first', async () => {
    const { code } = services.channel.pairingCode([]);
    for (let attempt = 0; attempt < CLIENT_PAIRING_TRIES; attempt++) expectCode(await pair(guess(), '203.0.113.7'), 403, 'pairing_failed');
    // Past its allowance the attacker is refused outright, however often it tries.
    for (let attempt = 0; attempt < 3 * CODE_TRIES; attempt++) {
      const refused = await pair(guess(), '203.0.113.7');
      expectCode(refused, 429, 'rate_limit_exceeded');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    }
    // Even the right code: a limited client's guesses never reach the codes at all.
    expectCode(await pair(code, '203.0.113.7'), 429, 'rate_limit_exceeded');
    // The device the code was meant for pairs.
    const paired = await pair(code, '198.51.100.4');
    expect(paired.statusCode, paired.body.slice(0, 300)).toBe(201);
    expect(paired.json().device_id).toMatch(/^dev_/);
  });

  it('guesses sent all at once are counted as they come, not after the fact', async () => {
    const { code } = services.channel.pairingCode([]);
    const answers = await Promise.all(Array.from({ length: 40 }, () => pair(guess(), '192.0.2.50')));
    expect(answers.filter((answer) => answer.statusCode === 403)).toHaveLength(CLIENT_PAIRING_TRIES);
    expect(answers.filter((answer) => answer.statusCode === 429)).toHaveLength(40 - CLIENT_PAIRING_TRIES);
    expect((await pair(code, '198.51.100.5')).statusCode).toBe(201);
  });

  it('an IPv6 client is one /64, and an IPv4-mapped address is its IPv4 address', async () => {
    const { code } = services.channel.pairingCode([]);
    for (let host = 1; host <= CLIENT_PAIRING_TRIES; host++) expectCode(await pair(guess(), `2001:db8:1:2::${host}`), 403, 'pairing_failed');
    expectCode(await pair(guess(), '2001:db8:1:2:ffff:1:2:3'), 429, 'rate_limit_exceeded');
    expectCode(await pair(guess(), '::ffff:203.0.113.7'), 429, 'rate_limit_exceeded');
    expect((await pair(code, '2001:db8:1:3::1')).statusCode).toBe(201);
    expect(clientOf('2001:DB8:0001:0002:0:0:0:9')).toBe(clientOf('2001:db8:1:2::1'));
    expect(clientOf('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientOf('::ffff:10.1.2.3')).toBe('10.1.2.3');
  });

  it('many clients together still burn a code after CODE_TRIES failures', async () => {
    const { code } = services.channel.pairingCode([]);
    for (let attempt = 0; attempt < CODE_TRIES; attempt++)
      expectCode(await pair(guess(), `10.9.${Math.floor(attempt / 4)}.${attempt % 4}`), 403, 'pairing_failed');
    const burned = await pair(code, '198.51.100.6');
    expectCode(burned, 403, 'pairing_failed');
    expect(burned.json().error.message).toMatch(new RegExp(`burned after ${CODE_TRIES} failed attempts`));
  });
});
