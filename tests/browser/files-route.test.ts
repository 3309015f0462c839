/** The companion route that hands a local GGUF to the PWA: size first (HEAD), then bytes, with ranges. */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinyModelPath } from '../helpers/models.js';
import { startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
let bytes: Buffer;

beforeAll(async () => {
  bytes = await readFile(await tinyModelPath());
  server = await startServer();
});

afterAll(async () => {
  await server?.stop();
});

const file = (id = 'tiny') => `${server.url}/v1/models/${id}/file`;

describe('GET /v1/models/{id}/file', () => {
  it('gives the size with HEAD and no body', async () => {
    const response = await fetch(file(), { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe(String(bytes.length));
    expect(response.headers.get('accept-ranges')).toBe('bytes');
    expect((await response.arrayBuffer()).byteLength).toBe(0);
  });

  it('serves the whole file, byte for byte', async () => {
    const response = await fetch(file());
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/octet-stream');
    expect(response.headers.get('content-length')).toBe(String(bytes.length));
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('serves a range, an open range and a suffix range', async () => {
    const first = await fetch(file(), { headers: { range: 'bytes=0-15' } });
    expect(first.status).toBe(206);
    expect(first.headers.get('content-range')).toBe(`bytes 0-15/${bytes.length}`);
    expect(Buffer.from(await first.arrayBuffer()).equals(bytes.subarray(0, 16))).toBe(true);

    const rest = await fetch(file(), { headers: { range: `bytes=${bytes.length - 100}-` } });
    expect(rest.status).toBe(206);
    expect(Buffer.from(await rest.arrayBuffer()).equals(bytes.subarray(bytes.length - 100))).toBe(true);

    const suffix = await fetch(file(), { headers: { range: 'bytes=-10' } });
    expect(suffix.status).toBe(206);
    expect(suffix.headers.get('content-length')).toBe('10');
    expect(Buffer.from(await suffix.arrayBuffer()).equals(bytes.subarray(bytes.length - 10))).toBe(true);
  });

  it('refuses a range past the end with 416', async () => {
    const response = await fetch(file(), { headers: { range: `bytes=${bytes.length}-` } });
    expect(response.status).toBe(416);
    expect(response.headers.get('content-range')).toBe(`bytes */${bytes.length}`);
  });

  it('answers 404 model_not_found for an unknown model', async () => {
    const response = await fetch(file('nope'));
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: 'model_not_found', type: 'invalid_request_error' } });
  });
});
