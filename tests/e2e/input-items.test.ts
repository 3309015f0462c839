import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedServer } from '../helpers/server.js';

const hearth = sharedServer();
let responseId: string;

beforeAll(async () => {
  const first = await hearth.client.responses.create({ model: 'tiny', input: 'Earlier turn', max_output_tokens: 2 });
  const response = await hearth.client.responses.create({
    model: 'tiny',
    previous_response_id: first.id,
    input: [
      { role: 'developer', content: 'Answer in one word.' },
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
      { type: 'function_call', call_id: 'call_1', name: 'clock', arguments: '{"zone":"utc"}' },
      { type: 'function_call_output', call_id: 'call_1', output: '12:00' },
      { role: 'user', content: [{ type: 'input_text', text: 'three' }] },
    ],
    max_output_tokens: 2,
  });
  responseId = response.id;
});

const texts = (items: OpenAI.Responses.ResponseItem[]) =>
  items.map((item) => (item.type === 'message' ? (item.content[0] as { text: string }).text : item.type === 'function_call' ? item.name : item.type));

describe('GET /v1/responses/{id}/input_items with the official client (responses.inputItems.list)', () => {
  it('lists this response’s own input items, newest first by default, in OpenAI’s item shapes', async () => {
    const page = await hearth.client.responses.inputItems.list(responseId);
    expect(texts(page.data)).toEqual(['three', 'function_call_output', 'clock', 'two', 'one', 'Answer in one word.']);
    expect(page.has_more).toBe(false);
    const [last, output, call, assistant] = page.data;
    expect(last).toMatchObject({ type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'three' }] });
    expect(last!.id).toMatch(/^msg_/);
    expect(output).toMatchObject({ type: 'function_call_output', call_id: 'call_1', output: '12:00' });
    expect(call).toMatchObject({ type: 'function_call', call_id: 'call_1', name: 'clock', arguments: '{"zone":"utc"}' });
    expect(assistant).toMatchObject({ role: 'assistant', content: [{ type: 'output_text', text: 'two', annotations: [] }] });
    expect(new Set(page.data.map((item) => item.id)).size).toBe(6);
  });

  it('pages with limit and after (the client’s auto-pagination), in both orders, with stable ids', async () => {
    const firstPage = await hearth.client.responses.inputItems.list(responseId, { limit: 4, order: 'asc' });
    expect(texts(firstPage.data)).toEqual(['Answer in one word.', 'one', 'two', 'clock']);
    expect(firstPage.has_more).toBe(true);
    const all: OpenAI.Responses.ResponseItem[] = [];
    for await (const item of hearth.client.responses.inputItems.list(responseId, { limit: 2, order: 'asc' })) all.push(item);
    expect(texts(all)).toEqual(['Answer in one word.', 'one', 'two', 'clock', 'function_call_output', 'three']);
    expect(all.slice(0, 4).map((item) => item.id)).toEqual(firstPage.data.map((item) => item.id));
    const after = await hearth.client.responses.inputItems.list(responseId, { after: all[1]!.id, limit: 2 });
    expect(texts(after.data)).toEqual(['Answer in one word.']);
  });

  it('pages backwards with before, and accepts include', async () => {
    const ids = (await hearth.client.responses.inputItems.list(responseId, { order: 'asc' })).data.map((item) => item.id);
    const raw = (await (await fetch(`${hearth.server.url}/v1/responses/${responseId}/input_items?order=asc&before=${ids[3]}&limit=2`)).json()) as {
      data: { id: string }[];
      first_id: string;
      last_id: string;
      has_more: boolean;
      object: string;
    };
    expect(raw).toMatchObject({ object: 'list', first_id: ids[0], last_id: ids[1], has_more: true });
    const included = await hearth.client.responses.inputItems.list(responseId, { include: ['message.output_text.logprobs'], limit: 1 });
    expect(included.data).toHaveLength(1);
  });

  it('answers 404 for an unknown response and 400 for a cursor that is not one of its items', async () => {
    const missing = await hearth.client.responses.inputItems.list('resp_nope').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    const bad = await hearth.client.responses.inputItems.list(responseId, { after: 'msg_nope' }).catch((error: unknown) => error);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect((bad as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('after');
    const limit = await hearth.client.responses.inputItems.list(responseId, { limit: 101 }).catch((error: unknown) => error);
    expect(limit).toBeInstanceOf(OpenAI.BadRequestError);
  });
});
