/**
 * Multipart uploads to the image routes: `server.limits.images_body_mb` bounds the whole request
 * (every part together), a body over it is refused with a 413 without being kept, and a route
 * takes only its own parts (one image for upscale; image, mask and the references a model takes
 * for edits), refusing a stray or extra one by name.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp } from '../../helpers/app.js';
import { imageDataDir, multipart, samplePng } from '../../helpers/images.js';
import { startServer, type RunningServer } from '../../helpers/server.js';
import { tempFolder } from '../../helpers/temp.js';

const MB = 1024 * 1024;
const LIMIT_MB = 16;
const BOUNDARY = 'hearth-upload-boundary';

let server: RunningServer;
let running: Awaited<ReturnType<typeof testApp>>;

beforeAll(async () => {
  const dataDir = tempFolder('uploads');
  writeFileSync(join(dataDir, 'config.yaml'), `version: 1\nserver:\n  limits: { images_body_mb: ${LIMIT_MB} }\n`);
  server = await startServer({ dataDir, withModel: false });
  running = await testApp({ dataDir: imageDataDir({ 'tiny-sd': {} }) });
});
afterAll(async () => {
  await server?.stop();
  await running?.close();
});

/** The server process's peak resident memory in MB since the last reset (Linux). */
function peakMb(pid: number): number {
  return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

/** A chunked multipart upload (no Content-Length: the server only learns its size by reading it). */
function upload(path: string, parts: { name: string; bytes: number }[], headers: Record<string, string> = {}) {
  let sent = 0;
  async function* body() {
    const block = Buffer.alloc(64 * 1024, 0x5a);
    for (const [index, part] of parts.entries()) {
      const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"; filename="part-${index}.png"\r\nContent-Type: image/png\r\n\r\n`;
      sent += head.length;
      yield Buffer.from(head);
      for (let left = part.bytes; left > 0; left -= block.length) {
        const chunk = left >= block.length ? block : block.subarray(0, left);
        sent += chunk.length;
        yield chunk;
      }
      yield Buffer.from('\r\n');
    }
    yield Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\nlanczos\r\n--${BOUNDARY}--\r\n`);
  }
  const url = new URL(`${server.url}${path}`);
  return new Promise<{ status: number; body: any; sent: number }>((resolve, reject) => {
    const outgoing = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, ...headers },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text), sent }));
      },
    );
    outgoing.on('error', reject);
    Readable.from(body()).pipe(outgoing);
  });
}

describe('the upload limit', () => {
  it('counts every part of the request: many files each under the limit get a 413, and the body is not kept', async () => {
    const pid = server.process.pid!;
    // Reset the peak resident size, so the next reading is the upload's own peak.
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    const before = peakMb(pid);
    const parts = Array.from({ length: 16 }, () => ({ name: 'image[]', bytes: 15 * MB }));
    const answer = await upload('/v1/images/edits', parts);
    // 240 MB were offered; what the server held at its peak is a fraction of that.
    expect(peakMb(pid) - before).toBeLessThan(120);
    expect(answer.status).toBe(413);
    expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', code: 'request_too_large', param: null });
    expect(answer.body.error.message).toContain(`${LIMIT_MB} MB`);
    expect(answer.body.error.message).toContain('images_body_mb');
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  it('refuses a declared Content-Length over the limit before reading the body', async () => {
    const form = await multipart({ model: 'lanczos', scale: '2' }, { image: Buffer.alloc(LIMIT_MB * MB + 1) });
    const response = await fetch(`${server.url}/v1/images/upscale`, { method: 'POST', headers: form.headers, body: new Uint8Array(form.payload) });
    expect(response.status).toBe(413);
    expect((await response.json()).error.code).toBe('request_too_large');
  });

  it('still takes an upload under the limit', async () => {
    const form = await multipart({ model: 'lanczos', scale: '2' }, { image: await samplePng(64, 48) });
    const response = await fetch(`${server.url}/v1/images/upscale`, { method: 'POST', headers: form.headers, body: new Uint8Array(form.payload) });
    expect(response.status).toBe(200);
    expect((await response.json()).data[0]).toMatchObject({ width: 128, height: 96 });
  });
});

describe('the parts a route takes', () => {
  const app = () => running.app;
  const send = async (url: string, fields: Record<string, string>, files: Record<string, Buffer | Buffer[]>) =>
    app().inject({ method: 'POST', url, ...(await multipart(fields, files)) });

  it('refuses a second image for upscale, naming it, before reading it whole', async () => {
    const answer = await upload('/v1/images/upscale', [
      { name: 'image', bytes: MB },
      { name: 'image', bytes: 12 * MB },
    ]);
    expect([answer.status, answer.body.error.code, answer.body.error.param]).toEqual([400, 'invalid_request_error', 'image']);
    expect(answer.body.error.message).toMatch(/at most 1 "image" file/);
  });

  it('refuses unknown and extra file parts of an edit by name', async () => {
    const png = await samplePng(64, 64);
    const stray = await send('/v1/images/edits', { model: 'tiny-sd', prompt: 'x' }, { image: png, reference: png });
    expect([stray.statusCode, stray.json().error.param]).toEqual([400, 'reference']);
    expect(stray.json().error.message).toMatch(/"reference" is not a file field/);
    const masks = await send('/v1/images/edits', { model: 'tiny-sd', prompt: 'x' }, { image: png, mask: [png, png] });
    expect([masks.statusCode, masks.json().error.param]).toEqual([400, 'mask']);
    // The model is named first and takes one reference image: the second is refused as it starts.
    const references = await send('/v1/images/edits', { model: 'tiny-sd', prompt: 'x' }, { 'image[]': [png, png, png] });
    expect([references.statusCode, references.json().error.code, references.json().error.param]).toEqual([400, 'model_capability_missing', 'image']);
    const ok = await send('/v1/images/edits', { model: 'tiny-sd', prompt: 'x', steps: '1' }, { image: png });
    expect(ok.statusCode).toBe(200);
  });
});
