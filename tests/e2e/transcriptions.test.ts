/**
 * POST /v1/audio/transcriptions with the official openai client (`client.audio.transcriptions.create`)
 * against a started server on the in-process engine, whose models folder holds the text-only tiny
 * model and tiny-audio (the tiny model with a sound projector beside it). Every refusal is the
 * client's BadRequestError, with OpenAI's error shape: a text-only model (naming the model that
 * hears), a model that hears but runs in process (with the reason), a sound that is not WAV or MP3,
 * a format Hearth cannot answer in, no model. The llama-server engine's real transcription is in
 * server-engine-transcriptions.test.ts.
 */
import OpenAI, { toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { installProjectorModel } from '../helpers/models.js';
import { newDataDir, sharedServer } from '../helpers/server.js';
import { tinyWav } from '../helpers/sounds.js';

const hearth = sharedServer({
  async prepare() {
    const dataDir = await newDataDir(true);
    await installProjectorModel(dataDir, 'audio');
    return { dataDir };
  },
});

/** What the client threw: OpenAI's BadRequestError, with the error's fields. */
async function refusal(request: Promise<unknown>): Promise<InstanceType<typeof OpenAI.BadRequestError>> {
  const error = await request.then(
    () => expect.unreachable('the request should have been refused'),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  const refused = error as InstanceType<typeof OpenAI.BadRequestError>;
  expect(refused.status).toBe(400);
  expect(refused.type).toBe('invalid_request_error');
  return refused;
}

const hello = () => toFile(tinyWav(1), 'hello.wav', { type: 'audio/wav' });

describe('client.audio.transcriptions.create on the in-process engine', () => {
  it('refuses the text-only model, naming the model here that hears', async () => {
    const error = await refusal(hearth.client.audio.transcriptions.create({ file: await hello(), model: 'tiny' }));
    expect(error.param).toBe('model');
    expect(error.message).toContain('tiny cannot transcribe: it takes no sound');
    expect(error.message).toContain('Models here that can: tiny-audio.');
  });

  it('refuses the model that hears while the in-process engine runs it, with the reason', async () => {
    const error = await refusal(hearth.client.audio.transcriptions.create({ file: await hello(), model: 'tiny-audio', language: 'en' }));
    expect(error.param).toBe('file');
    expect(error.message).toContain(
      "tiny-audio takes audio only on the llama-server engine (it runs the model's projector), and the in-process engine runs it now: ",
    );
    expect(error.message).toContain('To transcribe, let the llama-server engine run it');
    expect(error.message).not.toContain('Send text only');
  });

  it('refuses a recording that is not WAV or MP3, saying what it is and how to convert it', async () => {
    const webm = Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), Buffer.alloc(64, 1)]);
    const error = await refusal(hearth.client.audio.transcriptions.create({ file: await toFile(webm, 'voice.webm'), model: 'tiny-audio' }));
    expect(error.param).toBe('file');
    expect(error.message).toContain('file (voice.webm) is a WebM or Matroska recording; local models here read WAV or MP3 only.');
    expect(error.message).toContain('ffmpeg -i voice.webm -ar 16000 -ac 1 voice.wav');
  });

  it('refuses subtitles and verbose_json, naming json and text', async () => {
    for (const format of ['srt', 'vtt', 'verbose_json'] as const) {
      const error = await refusal(hearth.client.audio.transcriptions.create({ file: await hello(), model: 'tiny-audio', response_format: format }));
      expect(error.param).toBe('response_format');
      expect(error.message).toContain('send json (the default, {"text": ...}) or text (the transcript alone)');
    }
  });

  it('refuses a request without a model', async () => {
    const error = await refusal(hearth.client.audio.transcriptions.create({ file: await hello(), model: '' }));
    expect(error.param).toBe('model');
  });
});
