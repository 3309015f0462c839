/** Test images, tiny Stable Diffusion folders and multipart bodies for the image routes. */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { writeTinyStableDiffusion, type TinySdOptions } from '../../scripts/onnx/tiny-sd.js';

/** A textured PNG (gradients, a disc, stripes), so upscalers have edges to work on. */
export async function samplePng(width: number, height: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="g"><stop offset="0" stop-color="#203080"/><stop offset="1" stop-color="#e0a040"/></linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#g)"/>
    <circle cx="${width / 2}" cy="${height / 2}" r="${Math.min(width, height) / 3}" fill="#c02020"/>
    ${Array.from({ length: 8 }, (_, i) => `<rect x="${(i * width) / 8}" y="0" width="${width / 32}" height="${height}" fill="#ffffff" opacity="0.6"/>`).join('')}
  </svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** A mask PNG, opaque: white (repaint) on the left half, black elsewhere. */
export async function leftHalfMask(width: number, height: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#000"/><rect width="${width / 2}" height="${height}" fill="#fff"/></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** A data folder whose models folder holds tiny SD pipelines, by id. */
export function imageDataDir(models: Record<string, TinySdOptions>): string {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-images-'));
  mkdirSync(join(dataDir, 'models'), { recursive: true });
  for (const [id, options] of Object.entries(models)) writeTinyStableDiffusion(join(dataDir, 'models', id), options);
  return dataDir;
}

/** A slow UNet (wide, deep convolutions) so a test can act between steps. */
export const SLOW_UNET: TinySdOptions = { unetWidth: 48, unetLayers: 8, sampleSize: 32 };

/** A multipart/form-data body as `inject` takes it. */
export async function multipart(
  fields: Record<string, string>,
  files: Record<string, Buffer | Buffer[]> = {},
): Promise<{ payload: Buffer; headers: Record<string, string> }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const [name, value] of Object.entries(files)) {
    for (const [index, bytes] of (Array.isArray(value) ? value : [value]).entries())
      form.append(name, new Blob([new Uint8Array(bytes)], { type: 'image/png' }), `${name}-${index}.png`);
  }
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  return { payload: Buffer.from(await request.arrayBuffer()), headers: { 'content-type': request.headers.get('content-type')! } };
}

/** Parses an SSE body into typed events. */
export function sseEvents(text: string): { event: string; data: any }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.+)$/m.exec(block)?.[1] ?? 'message';
      const data = /^data: (.+)$/m.exec(block)?.[1];
      return { event, data: data ? JSON.parse(data) : undefined };
    });
}
