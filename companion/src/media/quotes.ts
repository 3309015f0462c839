/** Quotes for hosted media: what would be sent, what it costs, until when the price holds. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import type { MediaProviderSettings } from '#shared/api/config.js';
import type { MediaBudget, MediaQuote, MediaQuoteRequest } from '#shared/api/media.js';
import { HearthError } from '../errors.js';
import { newId } from '../ids.js';
import { MAX_INPUT_PIXELS } from '../images/image-io.js';
import { orderOf, type QuoteRow } from './media-store.js';

const MAX_PROMPT_CHARS = 4000;
/** The first-frame formats taken, by the format sharp finds in the bytes: their file extension. */
const IMAGE_FORMATS: Record<string, string> = { png: 'png', jpeg: 'jpg', webp: 'webp' };

function refuse(param: string, message: string): never {
  throw new HearthError('invalid_request_error', message, { param });
}

/**
 * The first frame of `video.from_image`, decoded from its data URL and checked to be a PNG, JPEG
 * or WebP picture (by its bytes, not its declared type): anything else is a 400 before a byte is
 * stored.
 */
async function firstFrame(dataUrl: string | undefined): Promise<{ bytes: Buffer; extension: string }> {
  const match = /^data:(image\/[a-z]+);base64,([A-Za-z0-9+/=]+)$/.exec(dataUrl ?? '');
  if (!match) refuse('input_image', 'video.from_image needs input_image as a data URL of a PNG, JPEG or WebP image.');
  const bytes = Buffer.from(match[2]!, 'base64');
  let format: string | undefined;
  try {
    const meta = await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
    format = meta.width && meta.height ? meta.format : undefined;
  } catch {
    format = undefined;
  }
  const extension = format ? IMAGE_FORMATS[format] : undefined;
  if (!extension) {
    throw new HearthError('invalid_image', 'input_image is not a PNG, JPEG or WebP picture Hearth can read (or has more than 64 megapixels).', {
      param: 'input_image',
    });
  }
  return { bytes, extension };
}

/**
 * Checks the request against the provider's offer; returns the row to store, with the first
 * frame (checked to be a picture) saved under `mediaDir`.
 */
export async function buildQuote(
  provider: MediaProviderSettings,
  request: MediaQuoteRequest,
  mediaDir: string,
  now: number,
  owner: string | null,
): Promise<QuoteRow> {
  const offer = request.model ? provider.models.find((model) => model.id === request.model) : provider.models[0];
  if (!offer) refuse('model', `${provider.name} offers ${provider.models.map((model) => model.id).join(', ')}; not "${request.model}".`);
  if (!offer.operations.includes(request.operation)) refuse('operation', `${offer.id} at ${provider.name} does ${offer.operations.join(', ')}.`);
  if (!offer.seconds.includes(request.seconds)) refuse('seconds', `${offer.id} makes clips of ${offer.seconds.join(', ')} seconds; not ${request.seconds}.`);
  if (!offer.sizes.includes(request.size)) refuse('size', `${offer.id} makes ${offer.sizes.join(', ')}; not ${request.size}.`);
  if (!request.prompt.trim()) refuse('prompt', 'prompt must not be empty.');
  if (request.prompt.length > MAX_PROMPT_CHARS) refuse('prompt', `prompt is longer than ${MAX_PROMPT_CHARS} characters.`);
  if (request.operation !== 'video.from_image' && request.input_image !== undefined) refuse('input_image', 'input_image is only for video.from_image.');
  const frame = request.operation === 'video.from_image' ? await firstFrame(request.input_image) : undefined;
  const id = newId('quote_');
  let inputImage: string | null = null;
  if (frame) {
    inputImage = join(mediaDir, `${id}.${frame.extension}`);
    await writeFile(inputImage, frame.bytes, { mode: 0o600 });
  }
  return {
    id,
    provider: provider.name,
    model: offer.id,
    operation: request.operation,
    prompt: request.prompt,
    seconds: request.seconds,
    size: request.size,
    cost_usd: Math.round(offer.usd_per_second * request.seconds * 10000) / 10000,
    input_image: inputImage,
    created_at: now,
    expires_at: now + provider.quote_ttl_seconds * 1000,
    used_at: null,
    owner_key: owner,
  };
}

export function quoteRecord(row: QuoteRow, provider: MediaProviderSettings | undefined, budget: MediaBudget): MediaQuote {
  const offer = provider?.models.find((model) => model.id === row.model);
  return {
    id: row.id,
    object: 'media.quote',
    ...orderOf(row),
    currency: 'USD',
    created_at: Math.floor(row.created_at / 1000),
    expires_at: Math.floor(row.expires_at / 1000),
    constraints: { seconds: offer?.seconds ?? [], sizes: offer?.sizes ?? [], operations: offer?.operations ?? [], max_prompt_chars: MAX_PROMPT_CHARS },
    budget,
  };
}
