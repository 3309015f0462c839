import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerStatus } from '#shared/api/admin.js';
import { startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
let client: OpenAI;

const clock = {
  type: 'function' as const,
  name: 'clock',
  description: 'The time in a zone',
  strict: true,
  parameters: { type: 'object', properties: { zone: { enum: ['utc', 'local'] } }, required: ['zone'], additionalProperties: false },
};

async function connect(dataDir?: string): Promise<void> {
  server = await startServer(dataDir ? { dataDir } : {});
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'not-needed', maxRetries: 0 });
}

beforeAll(() => connect());

afterAll(async () => {
  expect(await server.stop()).toBe(0);
});

describe('POST /v1/responses with the official openai client', () => {
  it('answers a Response object that the client can read', async () => {
    const response = await client.responses.create({
      model: 'tiny',
      input: 'Hello',
      instructions: 'Be brief.',
      max_output_tokens: 12,
      metadata: { topic: 'greeting' },
    });
    expect(response.id).toMatch(/^resp_/);
    expect(response.object).toBe('response');
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(response.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'incomplete' });
    expect(response.output[0]!.id).toMatch(/^msg_/);
    expect(response.output_text.length).toBeGreaterThan(0);
    expect(response.usage).toMatchObject({ output_tokens: 12, total_tokens: response.usage!.input_tokens + 12 });
    expect(response.instructions).toBe('Be brief.');
    expect(response.metadata).toEqual({ topic: 'greeting' });

    const stored = await client.responses.retrieve(response.id);
    expect(stored.output_text).toBe(response.output_text);
  });

  it('streams the typed events in protocol order', async () => {
    const stream = await client.responses.create({
      model: 'tiny',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'Stream please' }] }],
      max_output_tokens: 10,
      stream: true,
    });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);

    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const types = events.map((event) => event.type);
    const deltas = events.filter((event) => event.type === 'response.output_text.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...deltas.map(() => 'response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.incomplete',
    ]);
    const done = events.find((event) => event.type === 'response.output_text.done')!;
    expect(deltas.map((event) => event.delta).join('')).toBe(done.text);
    const last = events.at(-1) as OpenAI.Responses.ResponseIncompleteEvent;
    expect((last.response.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0]).toMatchObject({ type: 'output_text', text: done.text });
    expect(last.response.usage?.output_tokens).toBe(10);
    expect((await client.responses.retrieve(last.response.id)).status).toBe('incomplete');
  });

  it('streams a function call the stream helper accumulates, then continues from its output', async () => {
    const stream = client.responses.stream({
      model: 'tiny',
      input: 'What time is it?',
      tools: [clock],
      tool_choice: { type: 'function', name: 'clock' },
      max_output_tokens: 100,
    });
    const types: string[] = [];
    stream.on('event', (event) => types.push(event.type));
    const response = await stream.finalResponse();
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const call = response.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({ type: 'function_call', name: 'clock', status: 'completed' });
    expect(call.call_id).toMatch(/^call_/);
    expect(call.id).toMatch(/^fc_/);
    expect(['utc', 'local']).toContain((JSON.parse(call.arguments) as { zone: string }).zone);

    const next = await client.responses.create({
      model: 'tiny',
      previous_response_id: response.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '12:00' }],
      tools: [clock],
      tool_choice: 'none',
      max_output_tokens: 6,
    });
    expect(next.previous_response_id).toBe(response.id);
    expect(next.output_text.length).toBeGreaterThan(0);
  });

  it('follows text.format json_schema', async () => {
    const schema = { type: 'object', properties: { warm: { type: 'boolean' } }, required: ['warm'], additionalProperties: false };
    const response = await client.responses.create({
      model: 'tiny',
      input: 'Is red warm?',
      text: { format: { type: 'json_schema', name: 'answer', schema, strict: true } },
      max_output_tokens: 60,
    });
    expect(response.status).toBe('completed');
    expect(typeof (JSON.parse(response.output_text) as { warm: boolean }).warm).toBe('boolean');
  });

  it('does not keep a response created with store: false', async () => {
    const response = await client.responses.create({ model: 'tiny', input: 'Forget this', store: false, max_output_tokens: 4 });
    const missing = await client.responses.retrieve(response.id).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    const continued = await client.responses
      .create({ model: 'tiny', input: 'And?', previous_response_id: response.id, max_output_tokens: 4 })
      .catch((error: unknown) => error);
    expect(continued).toBeInstanceOf(OpenAI.NotFoundError);
    expect((continued as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('response_not_found');
    expect((continued as InstanceType<typeof OpenAI.NotFoundError>).param).toBe('previous_response_id');
  });

  it('deletes a stored response', async () => {
    const response = await client.responses.create({ model: 'tiny', input: 'Short-lived', max_output_tokens: 4 });
    await client.responses.delete(response.id);
    expect(await client.responses.retrieve(response.id).catch((error: unknown) => error)).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await client.responses.delete(response.id).catch((error: unknown) => error)).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('answers request errors by field', async () => {
    const badItem = await client.responses
      .create({ model: 'tiny', input: [{ type: 'function_call', name: 'clock' } as never] })
      .catch((error: unknown) => error);
    expect(badItem).toBeInstanceOf(OpenAI.BadRequestError);
    expect((badItem as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input[0].call_id');
    const image = await client.responses
      .create({ model: 'tiny', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' }] }] })
      .catch((error: unknown) => error);
    // Images are taken, but a remote image URL only when the owner turned remote images on.
    expect((image as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input[0].content[0].image_url');
    expect((image as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/remote/i);
    const model = await client.responses.create({ model: 'no-such-model', input: 'x' }).catch((error: unknown) => error);
    expect((model as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
  });

  it('stops generating when a streaming client disconnects', async () => {
    const busy = async () => ((await (await fetch(`${server.url}/admin/status`)).json()) as ServerStatus).loaded.reduce((sum, model) => sum + model.busy, 0);
    const controller = new AbortController();
    const response = await fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', input: 'Go on forever', stream: true, max_output_tokens: 1_000_000 }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    let seen = '';
    while (seen.split('response.output_text.delta').length < 4) seen += new TextDecoder().decode((await reader.read()).value);
    expect(await busy()).toBe(1);
    controller.abort();
    await expect.poll(busy, { timeout: 10_000, interval: 50 }).toBe(0);
  });

  it('continues a stored response after the server restarts', async () => {
    const first = await client.responses.create({ model: 'tiny', input: 'Remember the word heron.', max_output_tokens: 8 });
    const fresh = await client.responses.create({ model: 'tiny', input: 'Which word?', max_output_tokens: 4, store: false });
    expect(await server.stop()).toBe(0);
    await connect(server.dataDir);

    expect((await client.responses.retrieve(first.id)).output_text).toBe(first.output_text);
    const next = await client.responses.create({ model: 'tiny', input: 'Which word?', previous_response_id: first.id, max_output_tokens: 4 });
    expect(next.previous_response_id).toBe(first.id);
    // The stored turn is in the prompt: more input tokens than the same question alone.
    expect(next.usage!.input_tokens).toBeGreaterThan(fresh.usage!.input_tokens + 5);
  });
});
