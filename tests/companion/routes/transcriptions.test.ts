/**
 * POST /v1/audio/transcriptions in process: OpenAI's multipart form, each wrong form a 4xx in
 * OpenAI's error shape that names the field and says what to send (no file, no model, a sound
 * local models cannot read, a format Hearth cannot answer in, a language that is no ISO-639-1
 * code, a body that is no form, one over server.body_limit_mb), a model that takes no sound
 * refused with what would, and a provider's model given the form at its own route.
 */
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { ErrorBody } from '#shared/api/errors.js';
import { sharedApp } from '../../helpers/app.js';
import { mockProviderForTest } from '../../helpers/mock-provider.js';
import { tinyWav } from '../../helpers/sounds.js';

const hearth = sharedApp({ resetConfig: true });

/** The first bytes of a WebM recording (what Chromium's MediaRecorder makes), then noise. */
const webm = Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81]), Buffer.alloc(256, 7)]);

async function transcription(fields: Record<string, string>, file?: { bytes: Buffer; name: string }): Promise<LightMyRequestResponse> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file) form.append('file', new Blob([new Uint8Array(file.bytes)]), file.name);
  const encoded = new Request('http://localhost/', { method: 'POST', body: form });
  return hearth.app.inject({
    method: 'POST',
    url: '/v1/audio/transcriptions',
    payload: Buffer.from(await encoded.arrayBuffer()),
    headers: { 'content-type': encoded.headers.get('content-type')! },
  });
}

/** The 400 in OpenAI's shape, naming `param`; its message. */
function refused(response: LightMyRequestResponse, param: string): string {
  expect(response.statusCode, response.body).toBe(400);
  const { error } = response.json() as ErrorBody;
  expect(error).toEqual({ message: expect.any(String), type: 'invalid_request_error', code: 'invalid_request_error', param });
  return error.message;
}

const wav = { bytes: tinyWav(0.5), name: 'hello.wav' };

describe('POST /v1/audio/transcriptions refuses', () => {
  it('a form without the file, saying which field carries the sound', async () => {
    expect(refused(await transcription({ model: 'tiny' }), 'file')).toBe(
      'file is required: send the sound to transcribe (WAV or MP3) as the multipart file field "file".',
    );
  });

  it('a form without the model', async () => {
    expect(refused(await transcription({}, wav), 'model')).toMatch(/^model /);
    expect(refused(await transcription({ model: '' }, wav), 'model')).toMatch(/^model /);
  });

  it('a sound that is not WAV or MP3, naming what it is and how to convert it', async () => {
    const message = refused(await transcription({ model: 'tiny' }, { bytes: webm, name: 'recording.webm' }), 'file');
    expect(message).toBe(
      'file (recording.webm) is a WebM or Matroska recording; local models here read WAV or MP3 only. Convert it first (for example: ffmpeg -i recording.webm -ar 16000 -ac 1 recording.wav) and send that.',
    );
    expect(refused(await transcription({ model: 'tiny' }, { bytes: Buffer.from('just some text'), name: 'notes.txt' }), 'file')).toMatch(
      /^file \(notes\.txt\) is neither WAV nor MP3; local models here read WAV or MP3 only\./,
    );
    expect(refused(await transcription({ model: 'tiny' }, { bytes: Buffer.alloc(0), name: 'empty.wav' }), 'file')).toBe(
      "file (empty.wav) is empty: send the recording's bytes.",
    );
  });

  it('a response format other than json and text, saying which are supported', async () => {
    for (const format of ['verbose_json', 'srt', 'vtt']) {
      const message = refused(await transcription({ model: 'tiny', response_format: format }, wav), 'response_format');
      expect(message).toContain(`response_format "${format}" is not supported here: send json (the default, {"text": ...}) or text (the transcript alone).`);
      expect(message).toContain('Timestamps (verbose_json, srt, vtt) need a speech engine');
    }
    expect(refused(await transcription({ model: 'tiny', response_format: 'xml' }, wav), 'response_format')).not.toContain('Timestamps');
  });

  it('a language that is not an ISO-639-1 code', async () => {
    expect(refused(await transcription({ model: 'tiny', language: 'english' }, wav), 'language')).toBe(
      'language "english" is not an ISO-639-1 code: send two letters, such as en, de or fr.',
    );
  });

  it('a field the route does not take, by name', async () => {
    expect(refused(await transcription({ model: 'tiny', timestamp_granularities: 'word' }, wav), 'timestamp_granularities')).toContain(
      '"timestamp_granularities" is not a field of this route.',
    );
  });

  it('a model that takes no sound, saying that none here does and what would', async () => {
    const message = refused(await transcription({ model: 'tiny', language: 'de' }, wav), 'model');
    expect(message).toBe(
      'tiny cannot transcribe: it takes no sound (its capabilities in GET /v1/models do not include audio). No model here can yet: install one whose projector (mmproj) has an audio encoder, such as Voxtral, Ultravox or Qwen2.5-Omni, with its mmproj file beside it.',
    );
  });

  it('a model that does not exist with 404 model_not_found', async () => {
    const response = await transcription({ model: 'whisper-1' }, wav);
    expect(response.statusCode).toBe(404);
    expect((response.json() as ErrorBody).error).toMatchObject({ code: 'model_not_found', param: 'model' });
  });

  it('a body that is not a form with 415, and one over server.body_limit_mb with 413 naming the setting', async () => {
    const json = await hearth.app.inject({ method: 'POST', url: '/v1/audio/transcriptions', payload: { model: 'tiny', file: 'aGVsbG8=' } });
    expect(json.statusCode).toBe(415);
    expect((json.json() as ErrorBody).error.message).toBe(
      'Send this request as multipart/form-data, with the sound (WAV or MP3) in the "file" field and the model in "model" (as OpenAI\'s transcriptions).',
    );
    hearth.services.reconfigure({ ...hearth.baseline, server: { ...hearth.baseline.server, body_limit_mb: 1 } });
    const large = await transcription({ model: 'tiny' }, { bytes: tinyWav(40), name: 'long.wav' });
    expect(large.statusCode).toBe(413);
    expect((large.json() as ErrorBody).error.message).toBe(
      'The upload is larger than 1 MB: server.body_limit_mb bounds the whole request, every file and field together.',
    );
  });
});

describe("a provider's model", () => {
  it("gets the form at the provider's /audio/transcriptions as it came, with the provider's own name for the model", async () => {
    const provider = await mockProviderForTest({ models: ['whisper-1'], reply: 'Hello from the provider.' });
    hearth.services.reconfigure({ ...hearth.baseline, providers: [{ name: 'cloud', base_url: provider.baseUrl }] });
    // A provider reads formats local models do not (WebM here), and answers with timestamps.
    const response = await transcription(
      { model: 'cloud/whisper-1', language: 'en', response_format: 'verbose_json' },
      { bytes: webm, name: 'recording.webm' },
    );
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ text: 'Hello from the provider.' });
    const sent = provider.requests.at(-1)!;
    expect(sent.path).toBe('/v1/audio/transcriptions');
    expect(sent.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const field = (name: string) => new RegExp(`name="${name}"\\r\\n\\r\\n([^\\r]*)\\r\\n`).exec(sent.body as string)?.[1];
    expect([field('model'), field('language'), field('response_format')]).toEqual(['whisper-1', 'en', 'verbose_json']);
    expect(sent.body as string).toContain('filename="recording.webm"');
  });
});
