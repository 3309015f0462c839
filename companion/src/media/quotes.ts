/** Quotes for hosted media: what would be sent, what it costs, until when the price holds. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MediaProviderSettings } from '#shared/api/config.js';
import type { MediaBudget, MediaQuote, MediaQuoteRequest } from '#shared/api/media.js';
import { HearthError } from '../errors.js';
import { newId } from '../ids.js';
import type { QuoteRow } from './media-store.js';

const MAX_PROMPT_CHARS = 4000;
const IMAGE_TYPES: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

function refuse(param: string, message: string): never {
  throw new HearthError('invalid_request_error', message, { param });
}

/** Checks the request against the provider's offer; returns the row to store (with the first frame saved under `mediaDir`). */
export function buildQuote(provider: MediaProviderSettings, request: MediaQuoteRequest, mediaDir: string, now: number): QuoteRow {
  const offer = request.model ? provider.models.find((model) => model.id === request.model) : provider.models[0];
  if (!offer) refuse('model', `${provider.name} offers ${provider.models.map((model) => model.id).join(', ')}; not "${request.model}".`);
  if (!offer.operations.includes(request.operation)) refuse('operation', `${offer.id} at ${provider.name} does ${offer.operations.join(', ')}.`);
  if (!offer.seconds.includes(request.seconds)) refuse('seconds', `${offer.id} makes clips of ${offer.seconds.join(', ')} seconds; not ${request.seconds}.`);
  if (!offer.sizes.includes(request.size)) refuse('size', `${offer.id} makes ${offer.sizes.join(', ')}; not ${request.size}.`);
  if (!request.prompt.trim()) refuse('prompt', 'prompt must not be empty.');
  if (request.prompt.length > MAX_PROMPT_CHARS) refuse('prompt', `prompt is longer than ${MAX_PROMPT_CHARS} characters.`);
  const id = newId('quote_');
  let inputImage: string | null = null;
  if (request.operation === 'video.from_image') {
    const match = /^data:(image\/[a-z]+);base64,([A-Za-z0-9+/=]+)$/.exec(request.input_image ?? '');
    const extension = match ? IMAGE_TYPES[match[1]!] : undefined;
    if (!match || !extension) refuse('input_image', 'video.from_image needs input_image as a data URL of a PNG, JPEG or WebP image.');
    inputImage = join(mediaDir, `${id}.${extension}`);
    writeFileSync(inputImage, Buffer.from(match[2]!, 'base64'), { mode: 0o600 });
  } else if (request.input_image !== undefined) {
    refuse('input_image', 'input_image is only for video.from_image.');
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
  };
}

export function quoteRecord(row: QuoteRow, provider: MediaProviderSettings | undefined, budget: MediaBudget): MediaQuote {
  const offer = provider?.models.find((model) => model.id === row.model);
  return {
    id: row.id,
    object: 'media.quote',
    provider: row.provider,
    model: row.model,
    operation: row.operation,
    prompt: row.prompt,
    seconds: row.seconds,
    size: row.size,
    cost_usd: row.cost_usd,
    currency: 'USD',
    created_at: Math.floor(row.created_at / 1000),
    expires_at: Math.floor(row.expires_at / 1000),
    constraints: { seconds: offer?.seconds ?? [], sizes: offer?.sizes ?? [], operations: offer?.operations ?? [], max_prompt_chars: MAX_PROMPT_CHARS },
    budget,
  };
}
