/**
 * Images and sounds in chat completions with the official openai client, against a started server
 * whose models folder holds the tiny model with its tiny projector beside it (the pair discovery
 * makes). On the llama-server engine the image reaches the model (the prompt grows by the
 * projector's tokens); on the in-process engine the request is refused with the reason. Bad media
 * gets a 400 that names the part either way.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { Ollama } from 'ollama';
import OpenAI from 'openai';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectorImageTokens } from '../../scripts/gguf/write-projector.js';
import { installProjectorModel } from '../helpers/models.js';
import { newDataDir, sharedServer, type ServerOptions } from '../helpers/server.js';

const onServer = process.env.HEARTH_ENGINE === 'server';
const options: ServerOptions = {};
const images = createServer();
let imageHost = '';
beforeAll(async () => {
  const dataDir = await newDataDir(true);
  await installProjectorModel(dataDir, 'vision');
  // Remote images on, with this test's own image server (on loopback) named as the one exception to the public-only rule.
  const png = Buffer.from(await base64Png(170), 'base64');
  images.on('request', (_request, response) => response.writeHead(200, { 'content-type': 'image/png' }).end(png));
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
  imageHost = `127.0.0.1:${(images.address() as AddressInfo).port}`;
  writeFileSync(join(dataDir, 'config.yaml'), `version: 1\nmodels:\n  remote_images:\n    enabled: true\n    allowed_hosts: ['${imageHost}']\n`);
  options.dataDir = dataDir;
});
afterAll(() => new Promise((resolve) => images.close(resolve)));
const hearth = sharedServer(options);

async function base64Png(red: number): Promise<string> {
  const png = await sharp({ create: { width: 32, height: 20, channels: 3, background: { r: red, g: 90, b: 20 } } })
    .png()
    .toBuffer();
  return png.toString('base64');
}

/** A WebP (which llama.cpp does not read): converted to PNG on the way to the engine. */
async function base64Webp(): Promise<string> {
  const webp = await sharp({ create: { width: 24, height: 24, channels: 3, background: { r: 5, g: 200, b: 90 } } })
    .webp()
    .toBuffer();
  return webp.toString('base64');
}

async function dataUrl(red: number): Promise<string> {
  return `data:image/png;base64,${await base64Png(red)}`;
}

/** What a promise rejected with (the test fails when it resolves). */
async function rejection(request: Promise<unknown>): Promise<unknown> {
  return request.then(
    () => expect.unreachable('the request should have been refused'),
    (caught: unknown) => caught,
  );
}

async function refusal(request: Promise<unknown>): Promise<InstanceType<typeof OpenAI.BadRequestError>> {
  const error = await rejection(request);
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
    // A remote image (models.remote_images on, its host named) costs the same.
    const fetched = await hearth.client.chat.completions.create(await withImage('tiny-vision', `http://${imageHost}/cat.png`));
    expect(fetched.usage!.prompt_tokens).toBe(seen.usage!.prompt_tokens);
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
    expect(remote.message).toMatch(/messages\[0\]\.content\[1\]\.image_url\.url leads to 192\.168\.1\.1, a loopback, private or link-local address/);
    expect(remote.param).toBe('messages[0].content[1].image_url.url');
    const text = await refusal(
      hearth.client.chat.completions.create(await withImage('tiny-vision', `data:image/png;base64,${Buffer.from('not an image at all').toString('base64')}`)),
    );
    expect(text.message).toMatch(/is not an image local models here can read/);
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

const inProcess = /tiny-vision takes images only on the llama-server engine/;

describe('images in Responses, Anthropic Messages and Ollama’s API', () => {
  const anthropic = () => new Anthropic({ baseURL: hearth.server.url, apiKey: 'unused', maxRetries: 0 });
  const ollama = () => new Ollama({ host: hearth.server.url });
  const responseWith = async (image: boolean) =>
    hearth.client.responses.create({
      model: 'tiny-vision',
      max_output_tokens: 3,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: question },
            ...(image ? [{ type: 'input_image' as const, image_url: await dataUrl(120), detail: 'auto' as const }] : []),
          ],
        },
      ],
    });
  const messageWith = async (image: boolean) =>
    anthropic().messages.create({
      model: 'tiny-vision',
      max_tokens: 3,
      messages: [
        {
          role: 'user',
          content: [
            ...(image ? [{ type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: await base64Png(60) } }] : []),
            { type: 'text', text: question },
          ],
        },
      ],
    });
  const ollamaChatWith = async (images: string[]) =>
    ollama().chat({ model: 'tiny-vision', stream: false, options: { num_predict: 3 }, messages: [{ role: 'user', content: question, images }] });

  it.runIf(onServer)('Responses: an input_image data URL reaches the model (the prompt grows by its tokens)', async () => {
    const plain = await responseWith(false);
    const seen = await responseWith(true);
    expect(seen.output.length).toBeGreaterThan(0);
    expect(seen.usage!.input_tokens).toBe(plain.usage!.input_tokens + projectorImageTokens);
  });

  it.runIf(onServer)('Anthropic Messages: a base64 image block reaches the model', async () => {
    const plain = await messageWith(false);
    const seen = await messageWith(true);
    expect(seen.content.length).toBeGreaterThan(0);
    // The whole prompt: what was evaluated and what the engine's cache held from the plain request.
    const prompt = (usage: Anthropic.Usage) => usage.input_tokens + (usage.cache_read_input_tokens ?? 0);
    expect(prompt(seen.usage)).toBe(prompt(plain.usage) + projectorImageTokens);
  });

  it.runIf(onServer)('Ollama: images on /api/chat and /api/generate reach the model, two (one a WebP) costing twice one', async () => {
    const plain = await ollamaChatWith([]);
    const one = await ollamaChatWith([await base64Png(10)]);
    const two = await ollamaChatWith([await base64Png(10), await base64Webp()]);
    expect(one.prompt_eval_count).toBe(plain.prompt_eval_count + projectorImageTokens);
    expect(two.prompt_eval_count).toBe(plain.prompt_eval_count + 2 * projectorImageTokens);
    const generated = await ollama().generate({
      model: 'tiny-vision',
      prompt: question,
      images: [await base64Png(10)],
      stream: false,
      options: { num_predict: 3 },
    });
    const bare = await ollama().generate({ model: 'tiny-vision', prompt: question, stream: false, options: { num_predict: 3 } });
    expect(generated.prompt_eval_count).toBe(bare.prompt_eval_count + projectorImageTokens);
  });

  it.runIf(!onServer)('on the in-process engine, each protocol refuses the image in its own error shape, saying why', async () => {
    const responses = await refusal(responseWith(true));
    expect(responses.message).toMatch(inProcess);
    const messages = await rejection(messageWith(true));
    expect(messages).toBeInstanceOf(Anthropic.BadRequestError);
    expect((messages as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringMatching(inProcess) as unknown },
    });
    const chat = (await rejection(ollamaChatWith([await base64Png(10)]))) as { status_code: number; error: string };
    expect(chat.status_code).toBe(400);
    expect(chat.error).toMatch(inProcess);
  });

  it('refuses bad images in each protocol’s shape, naming the part', async () => {
    const file = await refusal(
      hearth.client.responses.create({
        model: 'tiny-vision',
        input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1', detail: 'auto' }] }],
      }),
    );
    expect(file.param).toBe('input[0].content[0].file_id');
    const remote = await rejection(
      anthropic().messages.create({
        model: 'tiny-vision',
        max_tokens: 3,
        messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'http://10.0.0.1/cat.png' } }] }],
      }),
    );
    expect(remote).toBeInstanceOf(Anthropic.BadRequestError);
    expect((remote as Error).message).toMatch(/messages\[0\]\.content\[0\]\.source\.url leads to 10\.0\.0\.1/);
    const garbled = (await rejection(ollamaChatWith(['@@@@']))) as { status_code: number; error: string };
    expect(garbled.status_code).toBe(400);
    expect(garbled.error).toMatch(/messages\[0\]\.images\[0\] is not base64/);
    const raw = (await rejection(ollama().generate({ model: 'tiny-vision', prompt: 'x', raw: true, images: [await base64Png(10)], stream: false }))) as {
      error: string;
    };
    expect(raw.error).toMatch(/images is not taken with raw: true/);
  });
});
