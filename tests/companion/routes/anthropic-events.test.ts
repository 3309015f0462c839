import { describe, expect, it } from 'vitest';
import { HearthError } from '../../../companion/src/errors.js';
import type { GenerationResult } from '../../../companion/src/inference/types.js';
import { MessageEvents } from '../../../companion/src/routes/anthropic/events.js';
import { allowedCalls, messageOf, messageShell } from '../../../companion/src/routes/anthropic/message.js';
import type { MessageStreamEvent } from '#shared/api/anthropic.js';

const result = (extra: Partial<GenerationResult> = {}): GenerationResult => ({
  text: '',
  toolCalls: [],
  finishReason: 'stop',
  promptTokens: 30,
  completionTokens: 7,
  ...extra,
});

const calls = [
  { id: 'call_1', name: 'read', arguments: '{"path":"a"}' },
  { id: 'call_2', name: 'read', arguments: '{"path":"b"}' },
];

/** The events a sequence of streamed pieces and a result become, as `type[index]:what` lines. */
function events(feed: (events: MessageEvents) => void, done: GenerationResult): string[] {
  const sent: MessageStreamEvent[] = [];
  const stream = new MessageEvents((event) => sent.push(event), messageShell('msg_x', 'tiny'));
  feed(stream);
  stream.finish(done);
  return sent.map((event) => {
    switch (event.type) {
      case 'content_block_start':
        return `start[${event.index}]:${event.content_block.type}`;
      case 'content_block_delta':
        return `delta[${event.index}]:${event.delta.type}`;
      case 'content_block_stop':
        return `stop[${event.index}]`;
      case 'message_delta':
        return `message_delta:${event.delta.stop_reason}`;
      default:
        return event.type;
    }
  });
}

describe('the stream of a reply', () => {
  it('thought, then text, then the calls: each run of one kind a block, ping after the first start, a signature closing the thought', () => {
    const order = events(
      (stream) => {
        stream.thinking('Let me');
        stream.thinking(' see.');
        stream.text('Reading');
        stream.text(' both.');
      },
      result({ toolCalls: calls, finishReason: 'tool_calls' }),
    );
    expect(order).toEqual([
      'message_start',
      'start[0]:thinking',
      'ping',
      'delta[0]:thinking_delta',
      'delta[0]:thinking_delta',
      'delta[0]:signature_delta',
      'stop[0]',
      'start[1]:text',
      'delta[1]:text_delta',
      'delta[1]:text_delta',
      'stop[1]',
      'start[2]:tool_use',
      'delta[2]:input_json_delta',
      'stop[2]',
      'start[3]:tool_use',
      'delta[3]:input_json_delta',
      'stop[3]',
      'message_delta:tool_use',
      'message_stop',
    ]);
  });

  it('a thought after text opens a new block; empty pieces open none; a reply of nothing still pings and ends', () => {
    expect(
      events(
        (stream) => {
          stream.text('a');
          stream.thinking('');
          stream.thinking('b');
        },
        result({ finishReason: 'length' }),
      ),
    ).toEqual([
      'message_start',
      'start[0]:text',
      'ping',
      'delta[0]:text_delta',
      'stop[0]',
      'start[1]:thinking',
      'delta[1]:thinking_delta',
      'delta[1]:signature_delta',
      'stop[1]',
      'message_delta:max_tokens',
      'message_stop',
    ]);
    expect(events(() => {}, result())).toEqual(['message_start', 'ping', 'message_delta:end_turn', 'message_stop']);
  });

  it('a failure after the stream opened is an error event in Anthropic’s shape', () => {
    const sent: MessageStreamEvent[] = [];
    const stream = new MessageEvents((event) => sent.push(event), messageShell('msg_x', 'tiny'));
    stream.fail(new HearthError('engine_crashed'));
    expect(sent.at(-1)).toEqual({ type: 'error', error: { type: 'overloaded_error', message: expect.stringContaining('engine') as string } });
  });
});

describe('a whole reply', () => {
  it('has thinking, text and tool_use blocks in that order, and usage that adds up with the cache', () => {
    const message = messageOf('msg_x', 'tiny', result({ text: 'Hi', reasoning: 'hmm', toolCalls: [calls[0]!], finishReason: 'tool_calls', cachedTokens: 20 }));
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'hmm', signature: 'hearth-unsigned' },
      { type: 'text', text: 'Hi', citations: null },
      { type: 'tool_use', id: 'call_1', name: 'read', input: { path: 'a' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toEqual({ input_tokens: 10, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 20 });
  });

  it('a call cut off by max_tokens has input {}; disable_parallel_tool_use keeps only the first call', () => {
    const cut = messageOf('msg_x', 'tiny', result({ toolCalls: [{ id: 'call_3', name: 'read', arguments: '{"pa' }], finishReason: 'length' }));
    expect(cut.content).toEqual([{ type: 'tool_use', id: 'call_3', name: 'read', input: {} }]);
    expect(cut.stop_reason).toBe('max_tokens');
    expect(allowedCalls(result({ toolCalls: calls }), true).toolCalls).toEqual([calls[0]]);
    expect(allowedCalls(result({ toolCalls: calls }), false).toolCalls).toEqual(calls);
  });
});
