/**
 * Media parts for local models: chat completions' `image_url` (a data URL; `detail` accepted and
 * left to the projector, which scales every image to its own size), Responses' `input_image`, and
 * `input_audio` (base64 WAV or MP3, what llama.cpp reads). Each becomes a MediaPart at its place
 * in the message's text (generation/image-input.ts reads the bytes, as it does Anthropic's and Ollama's images).
 * A remote http(s) image URL is kept as a URL: the generation path fetches it only when the owner
 * turned that on (generation/image-fetch.ts).
 */
import { HearthError } from '../../errors.js';
import { decodeBase64, imageFromUrl } from '../../generation/image-input.js';
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

/** The format of a sound's bytes when it is one local models here read (WAV or MP3), with its media type. */
export function audioFormatOf(bytes: Buffer): { format: string; mime: string } | undefined {
  const format = Object.keys(AUDIO_FORMATS).find((name) => AUDIO_FORMATS[name]!.test(bytes));
  return format ? { format, mime: AUDIO_FORMATS[format]!.mime } : undefined;
}

function refuse(param: string, message: string): never {
  throw new HearthError('invalid_request_error', message, { param });
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
  const bytes = decodeBase64(data, `${param}.input_audio.data`, 'sound');
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
