/** Plain Lanczos-3 resampling through libvips: the fast, model-free upscaler. */
import sharp from 'sharp';
import type { RgbImage } from '../image-io.js';

export async function lanczosUpscale(image: RgbImage, scale: number): Promise<RgbImage> {
  const { data, info } = await sharp(image.pixels, { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize(image.width * scale, image.height * scale, { kernel: 'lanczos3', fit: 'fill' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { pixels: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height };
}
