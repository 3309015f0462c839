/**
 * Images and sounds in chat completions with the official openai client, against a started server
 * whose models folder holds the tiny model with its tiny projector beside it (the pair discovery
 * makes). On the llama-server engine the image reaches the model (the prompt grows by the
 * projector's tokens); on the in-process engine the request is refused with the reason. Bad media
 * gets a 400 that names the part either way.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { projectorImageTokens } from '../../scripts/gguf/write-projector.js';
import { tinyVisionModelPaths } from '../helpers/models.js';
import { newDataDir, sharedServer, type ServerOptions } from '../helpers/server.js';

const onServer = process.env.HEARTH_ENGINE === 'server';
const options: ServerOptions = {};
beforeAll(async () => {
  const dataDir = await newDataDir(true);
  const { model, projector } = await tinyVisionModelPaths();
  // A folder of their own: a projector pairs with every model in its folder (the tiny model is in models/).
  mkdirSync(join(dataDir, 'models', 'vision'));
  copyFileSync(model, join(dataDir, 'models', 'vision', 'tiny-vision.gguf'));
  copyFileSync(projector, join(dataDir, 'models', 'vision', 'mmproj-tiny-vision.gguf'));
  options.dataDir = dataDir;
});
const hearth = sharedServer(options);

async function dataUrl(red: number): Promise<string> {
  const png = await sharp({ create: { width: 32, height: 20, channels: 3, background: { r: red, g: 90, b: 20 } } })
    .png()
    .toBuffer();
  return `data:image/png;base64,${png.toString('base64')}`;
}

async function refusal(request: Promise<unknown>): Promise<InstanceType<typeof OpenAI.BadRequestError>> {
  const error = await request.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  return error as InstanceType<typeof OpenAI.BadRequestError>;
}

const question = 'What is in this picture?';
const withImage = async (model: string, url: string): Promise<OpenAI.ChatCompletionCreateParamsNonStreaming> => ({
  model,
  max_tokens: 3,
  seed: 2,
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: question },
        { type: 'image_url', image_url: { url, detail: 'low' } },
      ],
    },
  ],
});

describe('images in chat completions', () => {
  it('lists vision for the model with a projector beside it, and not for the one without', async () => {
    const models = (await hearth.client.models.list()).data as unknown as { id: string; capabilities: string[] }[];
    expect(models.find((model) => model.id === 'tiny-vision')?.capabilities).toContain('vision');
    expect(models.find((model) => model.id === 'tiny')?.capabilities).not.toContain('vision');
  });

  it.runIf(onServer)('answers with one image or two in the prompt (each costing the projector’s tokens), streamed or not', async () => {
    const plain = await hearth.client.chat.completions.create({
      model: 'tiny-vision',
      max_tokens: 3,
      seed: 2,
      messages: [{ role: 'user', content: question }],
    });
    const seen = await hearth.client.chat.completions.create(await withImage('tiny-vision', await dataUrl(200)));
    expect(seen.choices[0]!.message.content?.length).toBeGreaterThan(0);
    expect(seen.usage!.prompt_tokens).toBeGreaterThanOrEqual(plain.usage!.prompt_tokens + projectorImageTokens);
    const twice = await withImage('tiny-vision', await dataUrl(200));
    const content = (twice.messages[0] as { content: OpenAI.ChatCompletionContentPart[] }).content;
    content.push({ type: 'image_url', image_url: { url: await dataUrl(30) } });
    const two = await hearth.client.chat.completions.create(twice);
    expect(two.usage!.prompt_tokens).toBe(seen.usage!.prompt_tokens + projectorImageTokens);

    const stream = await hearth.client.chat.completions.create({ ...(await withImage('tiny-vision', await dataUrl(90))), stream: true });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? '';
    expect(streamed.length).toBeGreaterThan(0);
  });

  it.runIf(!onServer)('on the in-process engine, refuses the image and says the llama-server engine is needed', async () => {
    const error = await refusal(hearth.client.chat.completions.create(await withImage('tiny-vision', await dataUrl(200))));
    expect(error.message).toMatch(/tiny-vision takes images only on the llama-server engine/);
  });

  it('refuses an image for a model without a projector, naming what to do', async () => {
    const error = await refusal(hearth.client.chat.completions.create(await withImage('tiny', await dataUrl(200))));
    expect(error.message).toMatch(/tiny cannot take images: it has no multimodal projector/);
  });

  it('refuses a remote URL, a file that is no image, bad base64 and an unknown audio format, naming the part', async () => {
    const remote = await refusal(hearth.client.chat.completions.create(await withImage('tiny-vision', 'http://192.168.1.1/cat.png')));
    expect(remote.message).toMatch(/messages\[0\]\.content\[1\]\.image_url\.url is a remote URL/);
    expect(remote.param).toBe('messages[0].content[1].image_url.url');
    const text = await refusal(
      hearth.client.chat.completions.create(await withImage('tiny-vision', `data:image/png;base64,${Buffer.from('not an image at all').toString('base64')}`)),
    );
    expect(text.message).toMatch(/is not a PNG, JPEG, GIF or BMP image/);
    const garbled = await refusal(hearth.client.chat.completions.create(await withImage('tiny-vision', 'data:image/png;base64,@@@@')));
    expect(garbled.message).toMatch(/is not base64/);
    const sound = await refusal(
      hearth.client.chat.completions.create({
        model: 'tiny-vision',
        messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'flac' as 'wav' } }] }],
      }),
    );
    expect(sound.message).toMatch(/input_audio\.format must be "wav" or "mp3"/);
  });
});
