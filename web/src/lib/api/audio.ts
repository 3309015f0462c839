/** Speech to text: the companion's POST /v1/audio/transcriptions. */
import type { Transcription } from '#shared/api/audio.js';
import { request } from './client';

/** What `model` (one whose capabilities include audio) heard in a WAV recording. */
export async function transcribe(model: string, wav: Uint8Array, signal?: AbortSignal): Promise<string> {
  const form = new FormData();
  form.set('model', model);
  form.set('file', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), 'recording.wav');
  // A Blob with its boundary in the type, so the request helper keeps the body as it is.
  const encoded = new Response(form);
  const body = await encoded.blob();
  const type = encoded.headers.get('content-type') ?? 'multipart/form-data';
  const answer = await request<Transcription>('/v1/audio/transcriptions', { method: 'POST', body, headers: { 'content-type': type }, signal });
  return answer.text;
}
