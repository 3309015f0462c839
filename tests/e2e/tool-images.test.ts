/**
 * Images in tool results, in each protocol's own shape and with its official client, against a
 * started server whose models folder holds the tiny model with its tiny projector beside it. On
 * the llama-server engine the image reaches the model: the prompt grows with it, and each further
 * image in the tool result makes it exactly the projector's tokens longer.
 * On the in-process engine the request is refused with the reason. A bad image inside a tool
 * result is a 400 naming the part, either way.
 */
import Anthropic from '@anthropic-ai/sdk';
import { Ollama } from 'ollama';
import OpenAI from 'openai';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { projectorImageTokens } from '../../scripts/gguf/write-projector.js';
import { installProjectorModel } from '../helpers/models.js';
import { newDataDir, sharedServer } from '../helpers/server.js';

const onServer = process.env.HEARTH_ENGINE === 'server';
const hearth = sharedServer({
  async prepare() {
    const dataDir = await newDataDir(true);
    await installProjectorModel(dataDir, 'vision');
    return { dataDir };
  },
});

let png = '';
beforeAll(async () => {
  png = (
    await sharp({ create: { width: 24, height: 16, channels: 3, background: { r: 200, g: 40, b: 90 } } })
      .png()
      .toBuffer()
  ).toString('base64');
});
const notImage = Buffer.from('not an image at all').toString('base64');

const question = 'What does the screen show?';
const said = 'The screen:';
const inProcess = /tiny-vision takes images only on the llama-server engine/;

/** What a promise rejected with (the test fails when it resolves). */
async function rejection(request: Promise<unknown>): Promise<unknown> {
  return request.then(
    () => expect.unreachable('the request should have been refused'),
    (caught: unknown) => caught,
  );
}

const anthropic = () => new Anthropic({ baseURL: hearth.server.url, apiKey: 'unused', maxRetries: 0 });
const ollama = () => new Ollama({ host: hearth.server.url });

/** A Messages conversation: the question, the model's tool_use, and a tool_result holding `images` (base64) after its text. */
const anthropicTurn = (images: string[], model = 'tiny-vision') =>
  anthropic().messages.create({
    model,
    max_tokens: 3,
    messages: [
      { role: 'user', content: question },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'screenshot', input: {} }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: [
              { type: 'text', text: said },
              ...images.map((data) => ({ type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data } })),
            ],
          },
        ],
      },
    ],
  });

/** The same conversation in chat completions: a tool message with image_url parts. */
const chatTurn = (urls: string[]) =>
  hearth.client.chat.completions.create({
    model: 'tiny-vision',
    max_tokens: 3,
    seed: 2,
    messages: [
      { role: 'user', content: question },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'screenshot', arguments: '{}' } }] },
      {
        role: 'tool',
        tool_call_id: 'call_1',
        // OpenAI's types take text parts only in a tool message; vLLM, llama-server and Hearth take images there too.
        content: [{ type: 'text', text: said }, ...urls.map((url) => ({ type: 'image_url', image_url: { url } }))] as OpenAI.ChatCompletionContentPartText[],
      },
    ],
  });

/** The same conversation in Responses: a function_call_output whose output holds input_image items. */
const responsesTurn = (urls: string[]) =>
  hearth.client.responses.create({
    model: 'tiny-vision',
    max_output_tokens: 3,
    input: [
      { role: 'user', content: question },
      { type: 'function_call', call_id: 'call_1', name: 'screenshot', arguments: '{}' },
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: [{ type: 'input_text', text: said }, ...urls.map((url) => ({ type: 'input_image' as const, image_url: url, detail: 'auto' as const }))],
      },
    ],
  });

/** The same conversation in Ollama's API: `images` on the tool message. */
const ollamaTurn = (images: string[]) =>
  ollama().chat({
    model: 'tiny-vision',
    stream: false,
    options: { num_predict: 3 },
    messages: [
      { role: 'user', content: question },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'screenshot', arguments: {} } }] },
      { role: 'tool', content: said, tool_name: 'screenshot', images },
    ],
  });

const dataUrl = (base64: string) => `data:image/png;base64,${base64}`;

/** A protocol's turn without an image, with `image` once and twice, checked as said below; `promptOf` reads an answer's prompt size. */
async function costsImageTokens<T>(turn: (images: string[]) => Promise<T>, image: string, promptOf: (answer: T) => number): Promise<T[]> {
  const answers = [await turn([]), await turn([image]), await turn([image, image])];
  const [plain, one, two] = answers.map(promptOf) as [number, number, number];
  expect(one).toBeGreaterThan(plain);
  expect(two).toBe(one + projectorImageTokens);
  return answers;
}

/*
 * What the prompt costs, by llama-server's own counts: with an image it grows, and each further
 * image costs exactly the projector's tokens. (The first image's cost is not compared with the
 * prompt without one: llama-server tokenises a prompt with media around each marker, which can
 * change a token of the text beside it.)
 */
describe('an image in a tool result reaches a vision model', () => {
  it.runIf(onServer)('Anthropic Messages: image blocks in a tool_result cost the projector’s tokens each', async () => {
    // The whole prompt: what was evaluated and what the engine's cache held from the request before.
    const answers = await costsImageTokens(anthropicTurn, png, (answer) => answer.usage.input_tokens + (answer.usage.cache_read_input_tokens ?? 0));
    expect(answers[1]!.content.length).toBeGreaterThan(0);
  });

  it.runIf(onServer)('chat completions: image_url parts in a tool message, through the openai client', async () => {
    await costsImageTokens(chatTurn, dataUrl(png), (answer) => answer.usage!.prompt_tokens);
  });

  it.runIf(onServer)('Responses: input_image items in a function_call_output', async () => {
    await costsImageTokens(responsesTurn, dataUrl(png), (answer) => answer.usage!.input_tokens);
  });

  it.runIf(onServer)('Ollama: images on a tool message', async () => {
    await costsImageTokens(ollamaTurn, png, (answer) => answer.prompt_eval_count);
  });

  it.runIf(!onServer)('on the in-process engine, each protocol refuses it and says why', async () => {
    const messages = await rejection(anthropicTurn([png]));
    expect(messages).toBeInstanceOf(Anthropic.BadRequestError);
    expect((messages as Error).message).toMatch(inProcess);
    const chat = await rejection(chatTurn([dataUrl(png)]));
    expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
    expect((chat as Error).message).toMatch(inProcess);
    const responses = await rejection(responsesTurn([dataUrl(png)]));
    expect((responses as Error).message).toMatch(inProcess);
    const ollamaChat = (await rejection(ollamaTurn([png]))) as { status_code: number; error: string };
    expect(ollamaChat.status_code).toBe(400);
    expect(ollamaChat.error).toMatch(inProcess);
  });

  it('a model without a projector is refused with what to do', async () => {
    const error = await rejection(anthropicTurn([png], 'tiny'));
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as Error).message).toMatch(/tiny cannot take images: it has no multimodal projector/);
  });
});

describe('a bad image in a tool result is a 400 naming the part, in each protocol’s shape', () => {
  it('Anthropic Messages', async () => {
    const error = await rejection(anthropicTurn([notImage]));
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: expect.stringMatching(/^messages\[2\]\.content\[0\]\.content\[1\]\.source\.data is not an image/) as unknown,
      },
    });
    const garbled = await rejection(anthropicTurn(['@@@@']));
    expect((garbled as Error).message).toMatch(/messages\[2\]\.content\[0\]\.content\[1\]\.source\.data is not base64/);
  });

  it('chat completions', async () => {
    const error = await rejection(chatTurn([dataUrl(notImage)]));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('messages[2].content[1].image_url.url');
    expect((error as Error).message).toMatch(/is not an image local models here can read/);
  });

  it('Responses', async () => {
    const error = await rejection(responsesTurn(['data:image/png;base64,@@@@']));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input[2].output[1].image_url');
    expect((error as Error).message).toMatch(/is not base64/);
  });

  it('Ollama', async () => {
    const error = (await rejection(ollamaTurn([notImage]))) as { status_code: number; error: string };
    expect(error.status_code).toBe(400);
    expect(error.error).toMatch(/messages\[2\]\.images\[0\] is not an image local models here can read/);
  });
});
