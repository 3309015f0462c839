/**
 * A request's images made fit for a model's projector before the engine sees them: decoded with
 * sharp (asynchronously, off the event loop), refused with a 400 naming the part when they are no
 * image, too large or too oddly shaped, turned upright by their EXIF orientation, and converted to
 * PNG when llama.cpp's decoder (stb_image: PNG, JPEG, BMP, GIF) would not read them (WebP, AVIF,
 * HEIF, TIFF, ...). PNG and JPEG that need nothing pass through as they came. Sounds are checked
 * where they arrive (their formats are few) and pass through here.
 */
import sharp, { type Metadata } from 'sharp';
import { HearthError } from '../errors.js';
import type { RemoteImageSettings } from '#shared/api/config.js';
import type { GenerationRequest, HistoryItem, MediaPart } from '../inference/types.js';
import { fetchImage } from './image-fetch.js';
import { MAX_ASPECT_RATIO, MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS } from './image-limits.js';

/** Remote images as the configuration's default has them: off. */
const NO_REMOTE_IMAGES: RemoteImageSettings = { enabled: false, allowed_hosts: [] };

/** Formats passed through unchanged: what stb_image reads as sharp reports them. */
const READ_AS_THEY_ARE = new Set(['png', 'jpeg']);

function refuse(param: string, message: string): never {
  throw new HearthError('invalid_image', message, { param });
}

/** Width and height of a BMP (which sharp does not read; llama.cpp does), from its header. */
function bmpSize(bytes: Buffer): { width: number; height: number } | undefined {
  if (bytes.length < 26 || bytes.subarray(0, 2).toString('latin1') !== 'BM') return undefined;
  return { width: Math.abs(bytes.readInt32LE(18)), height: Math.abs(bytes.readInt32LE(22)) };
}

function checkShape(width: number, height: number, param: string): void {
  if (width < 1 || height < 1) refuse(param, `${param} has no pixels.`);
  if (width * height > MAX_IMAGE_PIXELS)
    refuse(param, `${param} is ${width}×${height}, more than ${MAX_IMAGE_PIXELS.toLocaleString('en')} pixels. Scale it down and send it again.`);
  if (Math.max(width, height) / Math.min(width, height) > MAX_ASPECT_RATIO)
    refuse(param, `${param} is ${width}×${height}: one side is more than ${MAX_ASPECT_RATIO} times the other. Crop it and send it again.`);
}

/** One image checked and, where needed, converted: the part the engine gets. */
export async function checkedImage(part: MediaPart): Promise<MediaPart> {
  const param = part.param ?? 'image';
  if (part.data.length > MAX_IMAGE_BYTES)
    refuse(param, `${param} is ${(part.data.length / 1024 / 1024).toFixed(1)} MB, more than ${MAX_IMAGE_BYTES / 1024 / 1024} MB. Send a smaller image.`);
  const bmp = bmpSize(part.data);
  if (bmp) {
    checkShape(bmp.width, bmp.height, param);
    return { ...part, mime: 'image/bmp' };
  }
  let meta: Metadata;
  try {
    meta = await sharp(part.data, { limitInputPixels: MAX_IMAGE_PIXELS, failOn: 'error' }).metadata();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (/pixel limit/i.test(reason)) refuse(param, `${param} has more than ${MAX_IMAGE_PIXELS.toLocaleString('en')} pixels. Scale it down and send it again.`);
    refuse(param, `${param} is not an image local models here can read (PNG, JPEG, WebP, GIF, BMP, TIFF, AVIF or HEIF).`);
  }
  if (meta.format === 'svg') refuse(param, `${param} is an SVG drawing: send it rendered, as PNG or JPEG.`);
  if (!meta.width || !meta.height) refuse(param, `${param} is not an image local models here can read (PNG, JPEG, WebP, GIF, BMP, TIFF, AVIF or HEIF).`);
  checkShape(meta.width, meta.height, param);
  const upright = (meta.orientation ?? 1) === 1;
  try {
    if (upright && READ_AS_THEY_ARE.has(meta.format ?? '')) {
      // Decoded to a thumbnail and thrown away: proves the whole file reads (a truncated one fails here, not in the engine).
      await sharp(part.data, { limitInputPixels: MAX_IMAGE_PIXELS, failOn: 'truncated' }).resize(8, 8, { fit: 'fill' }).raw().toBuffer();
      return { ...part, mime: `image/${meta.format}` };
    }
    // rotate() with no angle applies the EXIF orientation; the first frame of an animation is the image.
    // The PNG only travels to llama-server on this machine: stored, not compressed, up to 4 megapixels (compressing took ten times the decode).
    const compressionLevel = meta.width * meta.height <= 4_000_000 ? 0 : 1;
    const png = await sharp(part.data, { limitInputPixels: MAX_IMAGE_PIXELS, failOn: 'error' })
      .rotate()
      .png({ compressionLevel, adaptiveFiltering: false })
      .toBuffer();
    return { ...part, data: png, mime: 'image/png' };
  } catch {
    refuse(param, `${param} could not be decoded: the file is damaged or truncated.`);
  }
}

/**
 * The request with its images fetched where they are remote (image-fetch.ts, as `remote` allows)
 * and checked (the rules above), in user messages and tool results alike; a request without
 * images is returned as it is.
 */
export async function checkedMedia(request: GenerationRequest, remote: RemoteImageSettings = NO_REMOTE_IMAGES): Promise<GenerationRequest> {
  if (!request.history.some(hasImages)) return request;
  return { ...request, history: await checkedHistory(request.history, remote, request.signal) };
}

function hasImages(item: HistoryItem): boolean {
  return (item.role === 'user' || item.role === 'tool') && item.media?.some((part) => part.kind === 'image') === true;
}

/** A history's images fetched and checked as checkedMedia does (an agent run's input is checked so before the run starts). */
export async function checkedHistory(history: HistoryItem[], remote: RemoteImageSettings = NO_REMOTE_IMAGES, signal?: AbortSignal): Promise<HistoryItem[]> {
  const checked = async (part: MediaPart): Promise<MediaPart> => {
    if (part.kind !== 'image') return part;
    if (part.url === undefined) return checkedImage(part);
    const { url, ...rest } = part;
    return checkedImage({ ...rest, data: await fetchImage(url, part.param ?? 'image', remote, { signal }) });
  };
  return Promise.all(
    history.map(async (item): Promise<HistoryItem> => {
      if (!hasImages(item) || (item.role !== 'user' && item.role !== 'tool') || !item.media) return item;
      return { ...item, media: await Promise.all(item.media.map(checked)) };
    }),
  );
}
