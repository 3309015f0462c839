/**
 * Remote images fetched with a local HTTP server the test starts (on loopback, which a fetch only
 * reaches when its host is named in allowed_hosts): off by default, loopback and private addresses
 * refused, redirects, size and time bounded, other schemes refused.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HearthError } from '../../../companion/src/errors.js';
import { fetchImage, isPublicAddress, MAX_REDIRECTS } from '../../../companion/src/generation/image-fetch.js';
import { MAX_IMAGE_BYTES } from '../../../companion/src/generation/image-limits.js';

const param = 'messages[0].content[0].image_url.url';
let server: Server;
let host = '';
let png: Buffer;
/** Responses held open (the slow path): ended after the test file. */
const held: { end(): void }[] = [];

beforeAll(async () => {
  png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#336699' } })
    .png()
    .toBuffer();
  server = createServer((request, response) => {
    const path = request.url ?? '/';
    const hops = /^\/hop\/(\d+)$/.exec(path);
    if (path === '/cat.png') response.writeHead(200, { 'content-type': 'image/png' }).end(png);
    else if (hops) response.writeHead(302, { location: Number(hops[1]) > 0 ? `/hop/${Number(hops[1]) - 1}` : '/cat.png' }).end();
    else if (path === '/to-file') response.writeHead(302, { location: 'file:///etc/passwd' }).end();
    else if (path === '/to-private') response.writeHead(302, { location: 'http://10.0.0.1/cat.png' }).end();
    else if (path === '/declared-huge') response.writeHead(200, { 'content-length': String(MAX_IMAGE_BYTES + 1) }).end();
    else if (path === '/endless') {
      // No length given: the fetch counts what arrives and stops past the limit.
      response.writeHead(200, { 'content-type': 'image/png' });
      const block = Buffer.alloc(1024 * 1024);
      const send = () => {
        while (response.write(block));
      };
      response.on('drain', send);
      send();
      held.push(response);
    } else if (path === '/slow') held.push(response);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const response of held) response.end();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const on = () => ({ enabled: true, allowed_hosts: [host] });

async function refusal(fetching: Promise<unknown>, message: RegExp): Promise<void> {
  const error = await fetching.then(
    () => expect.unreachable('the fetch should have been refused'),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(HearthError);
  expect((error as HearthError).param).toBe(param);
  expect((error as HearthError).message).toMatch(message);
}

describe('remote images', () => {
  it('are refused while models.remote_images is off, even from a named host', async () => {
    await refusal(fetchImage(`http://${host}/cat.png`, param, { enabled: false, allowed_hosts: [host] }), /fetching remote images is off/);
  });

  it('never reach loopback or private addresses unless the host is named', async () => {
    const open = { enabled: true, allowed_hosts: [] };
    await refusal(fetchImage(`http://${host}/cat.png`, param, open), /leads to 127\.0\.0\.1, a loopback, private or link-local address/);
    await refusal(fetchImage('http://[::1]/cat.png', param, open), /leads to ::1/);
    await refusal(
      fetchImage(`http://localhost:${host.split(':')[1]}/cat.png`, param, open),
      /localhost, which resolves to a loopback, private or link-local address/,
    );
    await refusal(fetchImage(`http://${host}/to-private`, param, on()), /leads to 10\.0\.0\.1/);
  });

  it('fetch a named host’s image, following redirects up to the limit', async () => {
    expect(await fetchImage(`http://${host}/cat.png`, param, on())).toEqual(png);
    expect(await fetchImage(`http://${host}/hop/${MAX_REDIRECTS - 1}`, param, on())).toEqual(png);
    await refusal(fetchImage(`http://${host}/hop/${MAX_REDIRECTS}`, param, on()), /redirects more than 3 times/);
    await refusal(fetchImage(`http://${host}/to-file`, param, on()), /leads to a file: URL/);
    await refusal(fetchImage(`http://${host}/missing.png`, param, on()), /its server answered 404/);
  });

  it('stop at the size limit, declared or counted, and at the time limit', async () => {
    await refusal(fetchImage(`http://${host}/declared-huge`, param, on()), /larger than 20 MB/);
    await refusal(fetchImage(`http://${host}/endless`, param, on()), /larger than 20 MB/);
    await refusal(fetchImage(`http://${host}/slow`, param, on(), { seconds: 0.2 }), /did not arrive within 0\.2 s/);
  });

  it('judge addresses: public ones pass, loopback, private, link-local and mapped ones do not', () => {
    expect(['8.8.8.8', '2606:4700::1111', '1.1.1.1'].map(isPublicAddress)).toEqual([true, true, true]);
    const inner = [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
    ];
    expect(inner.filter(isPublicAddress)).toEqual([]);
  });
});
