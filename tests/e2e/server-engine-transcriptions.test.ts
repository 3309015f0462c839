/**
 * A real transcription on the llama-server engine, with the official openai client against a
 * started server whose models folder holds tiny-audio (the tiny model with the tiny sound
 * projector: Ultravox's type, a 30-token window for each 30 seconds of sound). The weights are
 * random, so the words mean nothing: what is checked is that the sound reached the model (the
 * prompt grows by the projector's tokens, by the usage and by the engine's own counters) and that
 * the answer comes back in both formats.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { toFile } from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ServerStatus } from '#shared/api/admin.js';
import { projectorAudioTokens } from '../../scripts/gguf/write-projector.js';
import { tinyAudioModelPaths } from '../helpers/models.js';
import { newDataDir, sharedServer, type ServerOptions } from '../helpers/server.js';
import { tinyWav } from '../helpers/sounds.js';

const options: ServerOptions = { env: { HEARTH_ENGINE: 'server' } };
beforeAll(async () => {
  const dataDir = await newDataDir(false);
  const { model, projector } = await tinyAudioModelPaths();
  mkdirSync(join(dataDir, 'models'), { recursive: true });
  copyFileSync(model, join(dataDir, 'models', 'tiny-audio.gguf'));
  copyFileSync(projector, join(dataDir, 'models', 'mmproj-tiny-audio.gguf'));
  options.dataDir = dataDir;
});
const hearth = sharedServer(options);

/** The prompt tokens llama-server evaluated for `model` so far, by its own counters. */
async function evaluated(model: string): Promise<number> {
  const status = (await (await fetch(`${hearth.server.url}/admin/status`)).json()) as ServerStatus;
  return status.loaded.find((entry) => entry.id === model)?.prompt_tokens?.evaluated ?? 0;
}

const transcribe = async (seconds: number) =>
  hearth.client.audio.transcriptions.create({ file: await toFile(tinyWav(seconds), 'speech.wav'), model: 'tiny-audio', language: 'en' });

describe('client.audio.transcriptions.create on the llama-server engine', () => {
  it('sends the sound to the model: a transcript comes back, and the prompt grows by a window of sound tokens every 30 seconds', async () => {
    const short = await transcribe(1);
    expect(typeof short.text).toBe('string');
    const before = await evaluated('tiny-audio');
    const long = await transcribe(31);
    const after = await evaluated('tiny-audio');
    expect(typeof long.text).toBe('string');
    // Two windows instead of one: the instruction is the same, the sound one window longer.
    expect(long.usage).toMatchObject({ type: 'tokens' });
    const tokens = (answer: typeof short) => (answer.usage as { input_tokens: number }).input_tokens;
    expect(tokens(long)).toBe(tokens(short) + projectorAudioTokens);
    // What the engine read for it: at least the two windows of sound (the instruction may come from its cache).
    expect(after - before).toBeGreaterThanOrEqual(2 * projectorAudioTokens);
  });

  it('answers response_format text with the transcript alone', async () => {
    const text = await hearth.client.audio.transcriptions.create({
      file: await toFile(tinyWav(1), 'speech.wav'),
      model: 'tiny-audio',
      response_format: 'text',
    });
    expect(typeof text).toBe('string');
  });
});
