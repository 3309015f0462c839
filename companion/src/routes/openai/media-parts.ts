/**
 * Media parts for local models: chat completions' `image_url` (a data URL; `detail` accepted and
 * left to the projector, which scales every image to its own size), Responses' `input_image`, and
 * `input_audio` (base64 WAV or MP3, what llama.cpp reads). Each becomes a MediaPart at its place
 * in the message's text. Anthropic's and Ollama's images come through imageFromBase64 / imageFromUrl.
 * A remote http(s) image URL is kept as a URL: the generation path fetches it only when the owner
 * turned that on (generation/image-fetch.ts).
 */
import { HearthError } from '../../errors.js';
import type { MediaPart } from '../../inference/types.js';

/** A content part as a client may send it (the body schema checks only `type`). */
export interface ContentPart {
  type: string;
  text?: string;
  image_url?: string | { url?: unknown; detail?: unknown };
  /** Responses' input_image may name an uploaded file instead of a URL. */
  file_id?: unknown;
  input_audio?: { data?: unknown; format?: unknown };
}

const AUDIO_FORMATS: Record<string, { mime: string; test: (bytes: Buffer) => boolean }> = {
  wav: { mime: 'audio/wav', test: (bytes) => bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WAVE' },
  mp3: { mime: 'audio/mpeg', test: (bytes) => bytes.subarray(0, 3).toString('latin1') === 'ID3' || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0) },
};

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function refuse(param: string, message: string): never {
  throw new HearthError('invalid_request_error', message, { param });
}

function decode(data: string, param: string, what: string): Buffer {
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
    data: decode(data, param, 'image'),
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

function image(part: ContentPart, param: string, offset: number): MediaPart {
  // Responses' input_image: image_url is the URL itself (or a file_id, which Hearth does not keep).
  if (part.type === 'input_image') {
    if (part.image_url === undefined && part.file_id !== undefined)
      refuse(`${param}.file_id`, `${param}.file_id names an uploaded file, which Hearth does not keep: send the image as image_url, a data URL.`);
    return imageFromUrl(part.image_url, `${param}.image_url`, offset);
  }
  const field = typeof part.image_url === 'string' ? part.image_url : part.image_url?.url;
  return imageFromUrl(field, typeof part.image_url === 'string' ? `${param}.image_url` : `${param}.image_url.url`, offset);
}

function audio(part: ContentPart, param: string, offset: number): MediaPart {
  const format = part.input_audio?.format;
  const data = part.input_audio?.data;
  if (typeof data !== 'string') refuse(`${param}.input_audio.data`, `${param}.input_audio.data is required: the sound's bytes in base64.`);
  const known = typeof format === 'string' ? AUDIO_FORMATS[format] : undefined;
  if (!known) refuse(`${param}.input_audio.format`, `${param}.input_audio.format must be "wav" or "mp3" (what local models here read).`);
  const bytes = decode(data, `${param}.input_audio.data`, 'sound');
  if (!known.test(bytes)) refuse(`${param}.input_audio.data`, `${param}.input_audio.data is not ${format === 'wav' ? 'a WAV' : 'an MP3'} file.`);
  return { kind: 'audio', data: bytes, mime: known.mime, offset, param: `${param}.input_audio.data` };
}

/** Whether a part is an image or a sound (as opposed to text). */
export function isMediaPart(part: ContentPart): boolean {
  return part.type === 'image_url' || part.type === 'input_image' || part.type === 'input_audio';
}

/** The media part at `param`, placed at `offset` in its message's text. */
export function mediaPart(part: ContentPart, param: string, offset: number): MediaPart {
  return part.type === 'input_audio' ? audio(part, param, offset) : image(part, param, offset);
}
