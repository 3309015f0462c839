/**
 * An image picked, pasted or dropped into the composer, read in the browser: decoded (turned
 * upright), scaled down within MAX_SIDE, and kept as PNG or JPEG, so stored conversations stay small.
 */
import { fitWithin, MAX_FILE_BYTES, MAX_SIDE, storedType } from './attachments';

export interface PreparedImage {
  blob: Blob;
  type: 'image/png' | 'image/jpeg';
  width: number;
  height: number;
  name?: string;
  /** The size it came in, when it was scaled down to fit. */
  original: { width: number; height: number } | null;
}

/** A file that cannot be attached, with the reason in words. */
export class ImageProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImageProblem';
  }
}

const megabytes = (bytes: number) => `${Math.round(bytes / 1_000_000)} MB`;

export async function prepareImage(file: File): Promise<PreparedImage> {
  const label = file.name ? `"${file.name}"` : 'The pasted file';
  if (!file.type.startsWith('image/')) throw new ImageProblem(`${label} is not an image: attach a PNG, JPEG, WebP or GIF picture.`);
  if (file.size > MAX_FILE_BYTES) throw new ImageProblem(`${label} is ${megabytes(file.size)}: attach an image under ${megabytes(MAX_FILE_BYTES)}.`);
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(file, { imageOrientation: 'from-image' });
  } catch {
    throw new ImageProblem(`${label} could not be read as a picture (an SVG, or a damaged file?): attach a PNG, JPEG, WebP or GIF.`);
  }
  try {
    const size = fitWithin(bitmap.width, bitmap.height, MAX_SIDE);
    const type = storedType(file.type);
    const name = file.name || undefined;
    // A PNG or JPEG small enough goes as it came (the companion turns an EXIF-rotated one upright).
    if (!size.scaled && file.type === type) return { blob: file, type, width: size.width, height: size.height, name, original: null };
    const blob = await encode(bitmap, size.width, size.height, type);
    return { blob, type, width: size.width, height: size.height, name, original: size.scaled ? { width: bitmap.width, height: bitmap.height } : null };
  } finally {
    bitmap.close();
  }
}

async function encode(bitmap: ImageBitmap, width: number, height: number, type: PreparedImage['type']): Promise<Blob> {
  const canvas = new OffscreenCanvas(width, height);
  const context = canvas.getContext('2d');
  if (!context) throw new ImageProblem('This browser cannot scale the picture down (no canvas): attach a smaller one.');
  context.imageSmoothingQuality = 'high';
  context.drawImage(bitmap, 0, 0, width, height);
  return canvas.convertToBlob({ type, quality: 0.9 });
}
