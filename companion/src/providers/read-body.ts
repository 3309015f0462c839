import { HearthError } from '../errors.js';
import { inWords } from '../line-buffer.js';

/**
 * Reading a provider's answer without trusting its size: a JSON answer (a completion, an image's
 * JSON, a model list) up to MAX_ANSWER_BYTES, an error answer's body up to MAX_ERROR_BYTES. What
 * passes the limit is cancelled, never read, so an endpoint cannot make Hearth hold gigabytes.
 */

/** A JSON answer read whole (a completion, embeddings, an image's JSON, a model list). */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
/** An error answer's body: enough for any message, nothing more is read. */
export const MAX_ERROR_BYTES = 64 * 1024;

/** The first `limit` bytes of a body, and whether that was all of it (the rest is cancelled). A body that breaks rejects. */
export async function readPrefix(body: ReadableStream<Uint8Array> | null, limit: number): Promise<{ bytes: Buffer; whole: boolean }> {
  if (!body) return { bytes: Buffer.alloc(0), whole: true };
  const reader = body.getReader();
  const pieces: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { bytes: Buffer.concat(pieces, size), whole: true };
      const room = limit - size;
      if (value.length > room) {
        pieces.push(value.subarray(0, room));
        await reader.cancel().catch(() => undefined);
        return { bytes: Buffer.concat(pieces, limit), whole: false };
      }
      pieces.push(value);
      size += value.length;
    }
  } finally {
    reader.releaseLock();
  }
}

/** An answer's text, up to MAX_ANSWER_BYTES; a longer one is provider_error (and the rest is cancelled). */
export async function readAnswer(response: Response, provider: string, limit = MAX_ANSWER_BYTES): Promise<string> {
  const { bytes, whole } = await readPrefix(response.body, limit);
  if (!whole)
    throw new HearthError('provider_error', `Provider "${provider}" answered with more than ${inWords(limit)}; Hearth reads at most that much of an answer.`);
  return bytes.toString('utf8');
}

/** An answer's JSON (undefined when it is not JSON or broke off), up to MAX_ANSWER_BYTES as readAnswer. */
export async function readAnswerJson(response: Response, provider: string): Promise<unknown> {
  let text: string;
  try {
    text = await readAnswer(response, provider);
  } catch (error) {
    // Too large is worth saying; a body that broke off is just not JSON.
    if (error instanceof HearthError) throw error;
    return undefined;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The first MAX_ERROR_BYTES of an error answer as text ('' when its body broke off). */
export async function readErrorText(response: Response): Promise<string> {
  try {
    return (await readPrefix(response.body, MAX_ERROR_BYTES)).bytes.toString('utf8');
  } catch {
    return '';
  }
}
