/** Reading uploaded images and writing results, through sharp (libvips). */
import sharp from 'sharp';
import { HearthError } from '../errors.js';

/** Decompression-bomb guard: uploads larger than this many pixels are refused before decoding. */
export const MAX_INPUT_PIXELS = 64 * 1024 * 1024;

export interface RgbImage {
  /** width × height × 3 bytes. */
  pixels: Uint8Array;
  width: number;
  height: number;
}

/** The size of an uploaded image; anything sharp cannot read is a 400 naming the field. */
export async function imageSize(bytes: Uint8Array, field: string): Promise<{ width: number; height: number; hasAlpha: boolean }> {
  try {
    const meta = await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
    if (!meta.width || !meta.height) throw new Error('no dimensions');
    return { width: meta.width, height: meta.height, hasAlpha: meta.hasAlpha ?? false };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const tooLarge = /pixel limit/i.test(reason);
    throw new HearthError(
      'invalid_image',
      tooLarge
        ? `The ${field} image has more than ${MAX_INPUT_PIXELS} pixels.`
        : `The ${field} file is not an image Hearth can read (PNG, JPEG, WebP, GIF, TIFF or AVIF): ${reason}.`,
      { param: field },
    );
  }
}

/** RGB bytes of an image, resized (stretched) to width × height when given; alpha is dropped over black. */
export async function decodeRgb(bytes: Uint8Array, width?: number, height?: number): Promise<RgbImage> {
  let image = sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS }).flatten({ background: '#000000' }).toColourspace('srgb');
  if (width && height) image = image.resize(width, height, { fit: 'fill', kernel: 'lanczos3' });
  const { data, info } = await image.removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { pixels: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height };
}

/**
 * A mask at width × height, one byte per pixel, >= 128 meaning "repaint". As in OpenAI's edits, a
 * mask with transparency repaints its transparent areas; an opaque mask repaints its white areas.
 */
export async function decodeMask(bytes: Uint8Array, width: number, height: number): Promise<Uint8Array> {
  const base = sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS }).resize(width, height, { fit: 'fill', kernel: 'nearest' });
  const { data, info } = await base.ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const pixels = info.width * info.height;
  const channels = info.channels;
  let transparent = false;
  for (let p = 0; p < pixels && !transparent; p++) transparent = data[p * channels + channels - 1]! < 255;
  const mask = new Uint8Array(pixels);
  for (let p = 0; p < pixels; p++) {
    const offset = p * channels;
    if (transparent) mask[p] = data[offset + channels - 1]! < 128 ? 255 : 0;
    else mask[p] = (data[offset]! + data[offset + 1]! + data[offset + 2]!) / 3 >= 128 ? 255 : 0;
  }
  return mask;
}

export function encodePng(image: RgbImage): Promise<Buffer> {
  return sharp(image.pixels, { raw: { width: image.width, height: image.height, channels: 3 } })
    .png({ compressionLevel: 6 })
    .toBuffer();
}
