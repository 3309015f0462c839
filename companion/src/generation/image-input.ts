/**
 * An image as a request gives it, read into a MediaPart: base64 bytes (Anthropic's base64 source,
 * Ollama's `images`) or a URL (chat completions' image_url, Responses' input_image, Anthropic's url
 * source, an agent run's input), wherever it stands (a user message, a tool result). Only the
 * base64 is read here; what the bytes are is settled on the generation path (media-check.ts).
 */
import { HearthError } from '../errors.js';
import type { MediaPart } from '../inference/types.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function refuse(param: string, message: string): never {
  throw new HearthError('invalid_request_error', message, { param });
}

/** Base64 text as bytes (whitespace ignored), or a 400 naming `param`. */
export function decodeBase64(data: string, param: string, what: string): Buffer {
  const clean = data.replace(/\s+/g, '');
  if (clean.length === 0 || clean.length % 4 === 1 || !BASE64.test(clean)) refuse(param, `${param} is not base64: send the ${what}'s bytes in base64.`);
  return Buffer.from(clean, 'base64');
}

/** An image sent as base64 bytes (Anthropic's base64 source, Ollama's `images`), at `offset` in its message's text; `declared`: the type the request gave (a provider gets it). */
export function imageFromBase64(data: unknown, param: string, offset: number, declared?: string): MediaPart {
  if (typeof data !== 'string' || data === '') refuse(param, `${param} is required: the image's bytes in base64.`);
  // What the bytes are is settled on the generation path (generation/media-check.ts: decoded, checked, converted).
  return {
    kind: 'image',
    data: decodeBase64(data, param, 'image'),
    mime: declared && /^image\/[\w.+-]+$/i.test(declared) ? declared.toLowerCase() : 'image/*',
    offset,
    param,
  };
}

/** An image named by a URL (chat completions' image_url, Responses' input_image, Anthropic's url source): a data URL. */
export function imageFromUrl(field: unknown, param: string, offset: number): MediaPart {
  if (typeof field !== 'string' || field === '') refuse(param, `${param} is required: a data URL such as data:image/png;base64,....`);
  const match = /^data:([^;,]*)(;[^,]*)?,(.*)$/s.exec(field);
  if (!match) {
    // A remote image is fetched on the generation path, when models.remote_images allows it (generation/image-fetch.ts).
    if (/^https?:\/\/[^\s]+$/i.test(field) && URL.canParse(field)) return { kind: 'image', data: Buffer.alloc(0), mime: 'image/*', offset, param, url: field };
    refuse(param, `${param} is not a data URL or an http(s) URL. Send the image as data:image/png;base64,....`);
  }
  if (!/;base64$/i.test(match[2] ?? '')) refuse(param, `${param} must be base64 encoded (data:image/png;base64,...).`);
  return imageFromBase64(match[3]!, param, offset, match[1]);
}
