/**
 * POST /v1/completions with the official openai client and llama.cpp's POST /infill, against a
 * started server whose models folder holds the tiny model and the tiny model with FIM tokens.
 */
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InfillAnswer } from '#shared/api/infill.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';
import { tinyFimModelPath } from '../helpers/models.js';
import { rejectedWith } from '../helpers/rejection.js';
import { newDataDir, sharedServer, type ServerOptions } from '../helpers/server.js';

const options: ServerOptions = {};
let mock: MockProvider;
beforeAll(async () => {
  mock = await startMockProvider({ reply: 'forwarded text' });
  const dataDir = await newDataDir(true);
  copyFileSync(await tinyFimModelPath(), join(dataDir, 'models', 'tiny-fim.gguf'));
  writeFileSync(join(dataDir, 'config.yaml'), ['version: 1', 'providers:', '  - name: mock', `    base_url: ${mock.baseUrl}`, ''].join('\n'));
  options.dataDir = dataDir;
});
const hearth = sharedServer(options);
afterAll(async () => {
  await mock?.close();
});

/** The 400 the client throws, as OpenAI's error shape. */
const refusal = (request: Promise<unknown>) => rejectedWith(request, OpenAI.BadRequestError);

const infill = (body: Record<string, unknown>) =>
  fetch(`${hearth.server.url}/infill`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('POST /v1/completions with the openai client', () => {
  it('lists what each model can do', async () => {
    const models = (await hearth.client.models.list()).data as unknown as { id: string; capabilities: string[] }[];
    expect(models.find((model) => model.id === 'tiny')?.capabilities).toEqual(['chat', 'completion', 'tools']);
    expect(models.find((model) => model.id === 'tiny-fim')?.capabilities).toEqual(['chat', 'completion', 'fim', 'tools']);
  });

  it('completes a raw prompt, 16 tokens unless told otherwise', async () => {
    const completion = await hearth.client.completions.create({ model: 'tiny', prompt: 'the water was', temperature: 0 });
    expect(completion).toMatchObject({ object: 'text_completion', model: 'tiny', system_fingerprint: 'hearth' });
    expect(completion.id).toMatch(/^cmpl-/);
    const choice = completion.choices[0]!;
    expect(choice).toMatchObject({ index: 0, logprobs: null, finish_reason: 'length' });
    expect(choice.text.length).toBeGreaterThan(0);
    expect(completion.usage).toMatchObject({ completion_tokens: 16 });
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + 16);
    // An array of one prompt is the same prompt.
    const again = await hearth.client.completions.create({ model: 'tiny', prompt: ['the water was'], temperature: 0 });
    expect(again.choices[0]!.text).toBe(choice.text);
  });

  it('streams text_completion chunks, the finish reason, the usage and [DONE]', async () => {
    const stream = await hearth.client.completions.create({
      model: 'tiny',
      prompt: 'one day',
      max_tokens: 6,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((chunk) => chunk.object === 'text_completion')).toBe(true);
    const text = chunks.map((chunk) => chunk.choices[0]?.text ?? '').join('');
    const whole = await hearth.client.completions.create({ model: 'tiny', prompt: 'one day', max_tokens: 6, temperature: 0 });
    expect(text).toBe(whole.choices[0]!.text);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('length');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 6 } });
  });

  it('fills in the middle on a model with FIM tokens', async () => {
    const plain = await hearth.client.completions.create({ model: 'tiny-fim', prompt: 'def add(a, b):\n    return', max_tokens: 4 });
    const completion = await hearth.client.completions.create({
      model: 'tiny-fim',
      prompt: 'def add(a, b):\n    return',
      suffix: '\n\nprint(add(1, 2))\n',
      max_tokens: 4,
    });
    expect(completion.choices[0]!.text.length).toBeGreaterThan(0);
    // The suffix and the three FIM tokens are part of the prompt.
    expect(completion.usage!.prompt_tokens).toBeGreaterThan(plain.usage!.prompt_tokens + 3);
  });

  it('forwards a provider model’s completion to the provider’s /completions', async () => {
    const completion = await hearth.client.completions.create({ model: 'mock/mock-small', prompt: 'Say hi', max_tokens: 5 });
    expect(completion.model).toBe('mock/mock-small');
    expect(completion.choices[0]!.text).toBe('forwarded text');
    const sent = mock.requests.find((request) => request.path === '/v1/completions');
    expect(sent?.body).toMatchObject({ model: 'mock-small', prompt: 'Say hi', max_tokens: 5 });
  });

  it('refuses a suffix on a model without FIM tokens, in OpenAI’s error shape', async () => {
    const error = await refusal(hearth.client.completions.create({ model: 'tiny', prompt: 'a', suffix: 'b' }));
    expect(error.param).toBe('suffix');
    expect(error.message).toMatch(/tiny has no fill-in-the-middle tokens.*code model/);
  });

  it('refuses what it does not support by name: n, best_of, echo, logprobs, several prompts', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ n: 2 }, 'n'],
      [{ best_of: 3 }, 'best_of'],
      [{ echo: true }, 'echo'],
      [{ logprobs: 2 }, 'logprobs'],
      [{ prompt: ['one', 'two'] }, 'prompt'],
    ];
    for (const [extra, param] of cases) {
      const error = await refusal(hearth.client.completions.create({ model: 'tiny', prompt: 'a', ...extra } as never));
      expect(error.param, param).toBe(param);
      expect(error.message).toMatch(new RegExp(param));
    }
  });
});

describe('POST /infill', () => {
  it('answers llama.cpp’s shape, on the one FIM model when none is named', async () => {
    const response = await infill({ input_prefix: 'def add(a, b):\n    return ', input_suffix: '\n', n_predict: 5, temperature: 0 });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as InfillAnswer;
    expect(answer).toMatchObject({ stop: true, model: 'tiny-fim', tokens_predicted: 5, stop_type: 'limit', truncated: false });
    expect(answer.content.length).toBeGreaterThan(0);
    // Extra files go before the prefix: more prompt, the same kind of answer.
    const extra = (await (
      await infill({ input_prefix: 'def add(a, b):\n    return ', input_suffix: '\n', n_predict: 5, input_extra: [{ filename: 'util.py', text: 'x = 1\n' }] })
    ).json()) as InfillAnswer;
    expect(extra.tokens_evaluated).toBeGreaterThan(answer.tokens_evaluated!);
  });

  it('streams data lines of {content, stop}, the last with the counts', async () => {
    const body = { model: 'tiny-fim', input_prefix: 'x = ', input_suffix: '\n', n_predict: 4, temperature: 0 };
    const response = await infill({ ...body, stream: true });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const lines = (await response.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as InfillAnswer);
    const last = lines.at(-1)!;
    expect(last).toMatchObject({ content: '', stop: true, tokens_predicted: 4 });
    expect(lines.slice(0, -1).every((line) => line.stop === false)).toBe(true);
    const whole = (await (await infill(body)).json()) as InfillAnswer;
    expect(lines.map((line) => line.content).join('')).toBe(whole.content);
  });

  it('refuses a model without FIM tokens with the field named', async () => {
    const response = await infill({ model: 'tiny', input_prefix: 'a', input_suffix: 'b' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { param: string } }).error.param).toBe('suffix');
  });
});
