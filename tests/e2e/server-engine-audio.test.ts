/**
 * Sounds in chat completions on the llama-server engine, with the official openai client against a
 * started server whose models folder holds the tiny model with the tiny sound projector beside it
 * (Ultravox's type, a 30-token sound window), and once more with a projector holding both encoders.
 * The sound reaches the model: the prompt grows by the projector's tokens, by the usage and by the
 * engine's own counters (GET /admin/status).
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { ServerStatus } from '#shared/api/admin.js';
import { projectorAudioTokens, projectorImageTokens, writeTinyProjector } from '../../scripts/gguf/write-projector.js';
import { installProjectorModel, tinyAudioModelPaths } from '../helpers/models.js';
import { newDataDir, sharedServer } from '../helpers/server.js';
import { tinyWav } from '../helpers/sounds.js';

const hearth = sharedServer({
  env: { HEARTH_ENGINE: 'server' },
  async prepare() {
    const dataDir = await newDataDir(true);
    await installProjectorModel(dataDir, 'audio');
    // A folder of its own too: a projector pairs with every model in its folder.
    const { model } = await tinyAudioModelPaths();
    mkdirSync(join(dataDir, 'models', 'both'));
    copyFileSync(model, join(dataDir, 'models', 'both', 'tiny-both.gguf'));
    await writeTinyProjector(join(dataDir, 'models', 'both', 'mmproj-tiny-both.gguf'), { vision: true, audio: true });
    return { dataDir };
  },
});

const question = 'What do you hear?';
const sound = (seconds: number): OpenAI.ChatCompletionContentPart => ({
  type: 'input_audio',
  input_audio: { data: tinyWav(seconds).toString('base64'), format: 'wav' },
});

async function image(): Promise<OpenAI.ChatCompletionContentPart> {
  const png = await sharp({ create: { width: 24, height: 16, channels: 3, background: { r: 200, g: 40, b: 90 } } })
    .png()
    .toBuffer();
  return { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } };
}

function ask(model: string, media: OpenAI.ChatCompletionContentPart[]): Promise<OpenAI.ChatCompletion> {
  return hearth.client.chat.completions.create({
    model,
    max_tokens: 3,
    seed: 2,
    messages: [{ role: 'user', content: media.length ? [{ type: 'text', text: question }, ...media] : question }],
  });
}

/** The prompt tokens llama-server evaluated for `model` so far, by its own counters. */
async function evaluated(model: string): Promise<number> {
  const status = (await (await fetch(`${hearth.server.url}/admin/status`)).json()) as ServerStatus;
  return status.loaded.find((entry) => entry.id === model)?.prompt_tokens?.evaluated ?? 0;
}

describe('sounds in chat completions on the llama-server engine', () => {
  it('lists audio for the models with a sound projector beside them, vision for the one that also sees', async () => {
    const models = (await hearth.client.models.list()).data as unknown as { id: string; capabilities: string[] }[];
    const capabilities = (id: string) => models.find((model) => model.id === id)?.capabilities;
    expect(capabilities('tiny-audio')).toContain('audio');
    expect(capabilities('tiny-audio')).not.toContain('vision');
    expect(capabilities('tiny-both')).toEqual(expect.arrayContaining(['audio', 'vision']));
    expect(capabilities('tiny')).not.toContain('audio');
  });

  it('a sound costs the projector’s tokens, by the usage and by the engine’s counters; 31 seconds cost two windows', async () => {
    const plain = await ask('tiny-audio', []);
    const before = await evaluated('tiny-audio');
    const heard = await ask('tiny-audio', [sound(1)]);
    const after = await evaluated('tiny-audio');
    expect(heard.choices[0]!.message.content?.length).toBeGreaterThan(0);
    expect(heard.usage!.prompt_tokens).toBe(plain.usage!.prompt_tokens + projectorAudioTokens);
    // What the engine read for it: at least the sound's tokens (the question before it may come from its cache).
    expect(after - before).toBeGreaterThanOrEqual(projectorAudioTokens);
    const long = await ask('tiny-audio', [sound(31)]);
    expect(long.usage!.prompt_tokens).toBe(plain.usage!.prompt_tokens + 2 * projectorAudioTokens);
  });

  it('a projector with both encoders takes an image and a sound in one message', async () => {
    const plain = await ask('tiny-both', []);
    const both = await ask('tiny-both', [await image(), sound(1)]);
    expect(both.usage!.prompt_tokens).toBe(plain.usage!.prompt_tokens + projectorImageTokens + projectorAudioTokens);
  });

  it('refuses an image for the model that only hears, saying what to do', async () => {
    const error = await ask('tiny-audio', [await image()]).then(
      () => expect.unreachable('the image should have been refused'),
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toMatch(/tiny-audio cannot take images: it has no multimodal projector for them/);
  });
});
