import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HearthError } from '../../../companion/src/errors.js';
import { ResponseStore } from '../../../companion/src/store/responses.js';
import type { GenerationResult } from '../../../companion/src/inference/types.js';
import {
  finishedResponse,
  historyOf,
  inputItemsOf,
  itemsToHistory,
  outputFormatOf,
  outputItemsOf,
  responseShell,
  toolModeOf,
  toolsOf,
} from '../../../companion/src/routes/openai/responses-convert.js';
import { openDatabase, type Db } from '../../../companion/src/store/database.js';
import type { InputItem, ResponseCreateRequest, ResponseObject } from '#shared/api/responses.js';

function thrown(run: () => unknown): HearthError {
  try {
    run();
  } catch (error) {
    if (error instanceof HearthError) return error;
    throw error;
  }
  throw new Error('expected a HearthError');
}

const result = (overrides: Partial<GenerationResult> = {}): GenerationResult => ({
  text: 'Hi there',
  toolCalls: [],
  finishReason: 'stop',
  promptTokens: 10,
  completionTokens: 3,
  ...overrides,
});

describe('request conversion', () => {
  it('reads a plain string input as one user message', () => {
    expect(inputItemsOf('Hello')).toEqual([{ type: 'message', role: 'user', content: 'Hello' }]);
  });

  it('converts messages, joining text parts and mapping developer to system', () => {
    const items: InputItem[] = [
      { role: 'developer', content: 'Be brief.' },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'Hello ' },
          { type: 'input_text', text: 'you' },
        ],
      },
      { type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hi', annotations: [] }] },
    ];
    expect(itemsToHistory(items, 'input')).toEqual([
      { role: 'system', text: 'Be brief.' },
      { role: 'user', text: 'Hello you' },
      { role: 'assistant', text: 'Hi', toolCalls: [] },
    ]);
  });

  it('folds function calls into the assistant turn they follow and maps their outputs to tool items', () => {
    const items: InputItem[] = [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: 'Checking.' },
      { type: 'function_call', call_id: 'call_a', name: 'weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', call_id: 'call_b', name: 'weather', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', call_id: 'call_a', output: 'sunny' },
      { type: 'function_call_output', call_id: 'call_b', output: [{ type: 'input_text', text: 'rain' }] },
      { type: 'function_call', call_id: 'call_c', name: 'clock', arguments: '{}' },
    ];
    expect(itemsToHistory(items, 'input')).toEqual([
      { role: 'user', text: 'Weather?' },
      {
        role: 'assistant',
        text: 'Checking.',
        toolCalls: [
          { id: 'call_a', name: 'weather', arguments: '{"city":"Paris"}' },
          { id: 'call_b', name: 'weather', arguments: '{"city":"Rome"}' },
        ],
      },
      { role: 'tool', callId: 'call_a', output: 'sunny' },
      { role: 'tool', callId: 'call_b', output: 'rain' },
      { role: 'assistant', text: '', toolCalls: [{ id: 'call_c', name: 'clock', arguments: '{}' }] },
    ]);
  });

  it('takes a user message’s input_image, and refuses images elsewhere, bad image URLs and unknown item types by field', () => {
    const png = Buffer.from('some bytes');
    const [user] = itemsToHistory(
      [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Look: ' },
            { type: 'input_image', image_url: `data:image/png;base64,${png.toString('base64')}` },
          ],
        },
      ],
      'input',
    );
    expect(user).toMatchObject({ role: 'user', text: 'Look: ', media: [{ kind: 'image', data: png, offset: 6, param: 'input[0].content[1].image_url' }] });
    const image = thrown(() => itemsToHistory([{ role: 'user', content: [{ type: 'input_image', image_url: 'x' } as never] }], 'input'));
    expect(image.param).toBe('input[0].content[0].image_url');
    const system = thrown(() => itemsToHistory([{ role: 'system', content: [{ type: 'input_image', image_url: 'x' } as never] }], 'input'));
    expect(system.param).toBe('input[0].content[0].type');
    const reference = thrown(() => itemsToHistory([{ role: 'user', content: 'x' }, { type: 'item_reference', id: 'msg_1' } as never], 'input'));
    expect(reference.param).toBe('input[1].type');
    expect(reference.message).toContain('item_reference');
  });

  it('puts instructions first, then the stored conversation, then the input', () => {
    const previous: InputItem[] = [
      { role: 'user', content: 'One' },
      { type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Two', annotations: [] }] },
    ];
    expect(historyOf('Be kind.', previous, inputItemsOf('Three'))).toEqual([
      { role: 'system', text: 'Be kind.' },
      { role: 'user', text: 'One' },
      { role: 'assistant', text: 'Two', toolCalls: [] },
      { role: 'user', text: 'Three' },
    ]);
    expect(historyOf(null, [], inputItemsOf('Hi'))).toEqual([{ role: 'user', text: 'Hi' }]);
  });

  it('refuses a conversation without any user or assistant message', () => {
    expect(thrown(() => historyOf('Only instructions', [], [])).param).toBe('input');
    expect(thrown(() => historyOf(null, [], [{ role: 'system', content: 'x' }])).param).toBe('input');
  });

  it('maps flat function tools, tool_choice and text.format', () => {
    const tools = toolsOf([
      { type: 'function', name: 'weather', description: 'Weather now', parameters: { type: 'object' }, strict: true },
      { type: 'function', name: 'clock', description: null, parameters: null },
    ]);
    expect(tools).toEqual([
      { name: 'weather', description: 'Weather now', parameters: { type: 'object' } },
      { name: 'clock', description: undefined, parameters: undefined },
    ]);
    expect(thrown(() => toolsOf([{ type: 'web_search' } as never])).param).toBe('tools[0].type');

    expect(toolModeOf(undefined, tools)).toEqual({ type: 'auto' });
    expect(toolModeOf(undefined, [])).toEqual({ type: 'none' });
    expect(toolModeOf('required', tools)).toEqual({ type: 'required' });
    expect(toolModeOf({ type: 'function', name: 'clock' }, tools)).toEqual({ type: 'named', name: 'clock' });
    expect(thrown(() => toolModeOf('required', [])).param).toBe('tool_choice');
    expect(thrown(() => toolModeOf({ type: 'file_search' } as never, tools)).param).toBe('tool_choice.type');
    const absent = thrown(() => toolModeOf({ type: 'function', name: 'stocks' }, tools));
    expect(absent.param).toBe('tool_choice');
    expect(absent.message).toContain('"stocks"');

    expect(outputFormatOf(undefined)).toEqual({ type: 'text' });
    expect(outputFormatOf({ type: 'json_object' })).toEqual({ type: 'json' });
    expect(outputFormatOf({ type: 'json_schema', name: 'x', schema: { type: 'object' }, strict: true })).toEqual({ type: 'json', schema: { type: 'object' } });
  });
});

describe('response building', () => {
  const body: ResponseCreateRequest = {
    model: 'tiny',
    input: 'Hi',
    instructions: 'Be kind.',
    tools: [{ type: 'function', name: 'clock' }],
    max_output_tokens: 20,
    metadata: { topic: 'test' },
  };

  it('starts an in-progress shell that echoes the request settings', () => {
    const shell = responseShell('resp_1', 1700000000, 'tiny', body);
    expect(shell).toMatchObject({
      id: 'resp_1',
      object: 'response',
      created_at: 1700000000,
      status: 'in_progress',
      output: [],
      usage: null,
      instructions: 'Be kind.',
      tools: [{ type: 'function', name: 'clock', description: null, parameters: null, strict: true }],
      tool_choice: 'auto',
      text: { format: { type: 'text' } },
      max_output_tokens: 20,
      metadata: { topic: 'test' },
      previous_response_id: null,
      store: true,
    });
    expect(responseShell('resp_2', 0, 'tiny', { ...body, store: false }).store).toBe(false);
  });

  it('builds a completed message response with usage', () => {
    const done = result();
    const output = outputItemsOf(done, 'msg_1');
    expect(output).toEqual([
      { type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hi there', annotations: [] }] },
    ]);
    const response = finishedResponse(responseShell('resp_1', 0, 'tiny', body), done, output);
    expect(response.status).toBe('completed');
    expect(response.incomplete_details).toBeNull();
    expect(response.usage).toEqual({
      input_tokens: 10,
      output_tokens: 3,
      total_tokens: 13,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it('marks a response cut by max_output_tokens incomplete', () => {
    const cut = result({ finishReason: 'length' });
    const output = outputItemsOf(cut, 'msg_1');
    expect(output[0]!.status).toBe('incomplete');
    const response = finishedResponse(responseShell('resp_1', 0, 'tiny', body), cut, output);
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });

  it('returns function calls without an empty message', () => {
    const output = outputItemsOf(result({ text: '', toolCalls: [{ id: 'call_x', name: 'clock', arguments: '{}' }], finishReason: 'tool_calls' }), 'msg_1');
    expect(output).toHaveLength(1);
    expect(output[0]).toMatchObject({ type: 'function_call', call_id: 'call_x', name: 'clock', arguments: '{}', status: 'completed' });
    expect(output[0]!.id).toMatch(/^fc_/);
    expect(outputItemsOf(result({ text: '' }), 'msg_1')[0]!.type).toBe('message');
  });
});

describe('ResponseStore', () => {
  let folder: string;
  let file: string;
  let db: Db;
  let store: ResponseStore;

  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'hearth-responses-'));
    file = join(folder, 'hearth.db');
    db = openDatabase(file);
    store = new ResponseStore(db);
  });

  afterEach(() => {
    if (db.open) db.close();
    rmSync(folder, { recursive: true, force: true });
  });

  function saved(id: string, previous: string | null, input: string, answer: string): ResponseObject {
    const body: ResponseCreateRequest = { model: 'tiny', input, instructions: 'Not carried over.', previous_response_id: previous };
    const done = result({ text: answer });
    const response = finishedResponse(responseShell(id, 1700000000, 'tiny', body), done, outputItemsOf(done, `msg_${id}`));
    store.save(response, inputItemsOf(input));
    return response;
  }

  it('returns a saved response by id, and nothing for an unknown id', () => {
    const response = saved('resp_a', null, 'One', 'Two');
    expect(store.get('resp_a')).toEqual(response);
    expect(store.get('resp_missing')).toBeUndefined();
  });

  it('walks the chain oldest first, inputs then outputs, without instructions, across a reopen', () => {
    saved('resp_a', null, 'One', 'Two');
    saved('resp_b', 'resp_a', 'Three', 'Four');
    saved('resp_c', 'resp_b', 'Five', 'Six');
    db.close();
    db = openDatabase(file);
    store = new ResponseStore(db);

    const texts = store.conversation('resp_c').map((item) => {
      const message = item as Extract<InputItem, { role: string }>;
      return typeof message.content === 'string' ? message.content : message.content.map((part) => ('text' in part ? part.text : '')).join('');
    });
    expect(texts).toEqual(['One', 'Two', 'Three', 'Four', 'Five', 'Six']);
    expect(store.conversation('resp_a')).toHaveLength(2);
    expect(JSON.stringify(store.conversation('resp_c'))).not.toContain('Not carried over.');
  });

  it('refuses an unknown previous_response_id', () => {
    const error = thrown(() => store.conversation('resp_missing'));
    expect(error.code).toBe('response_not_found');
    expect(error.param).toBe('previous_response_id');
  });

  it('deletes a response; a chain through it then starts after it', () => {
    saved('resp_a', null, 'One', 'Two');
    saved('resp_b', 'resp_a', 'Three', 'Four');
    expect(store.delete('resp_a')).toBe(true);
    expect(store.delete('resp_a')).toBe(false);
    expect(store.get('resp_a')).toBeUndefined();
    expect(store.conversation('resp_b')).toHaveLength(2);
  });

  it('saves a continuation whose predecessor was deleted meanwhile', () => {
    saved('resp_a', null, 'One', 'Two');
    store.delete('resp_a');
    saved('resp_b', 'resp_a', 'Three', 'Four');
    expect(store.get('resp_b')!.previous_response_id).toBe('resp_a');
    expect(store.conversation('resp_b')).toHaveLength(2);
  });
});
