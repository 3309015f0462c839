/**
 * A conversation with media as a provider gets it: chat-completions parts, each image or sound at
 * its place in the user message's text, as it came (a remote image as its URL).
 */
import { describe, expect, it } from 'vitest';
import type { HistoryItem } from '../../../companion/src/inference/types.js';
import { chatMessages } from '../../../companion/src/providers/chat-stream.js';

const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);
const wav = Buffer.from('RIFF0000WAVEfmt ');

describe('chatMessages with media', () => {
  it('puts each image and sound at its place among the text parts', () => {
    const history: HistoryItem[] = [
      { role: 'system', text: 'Be brief.' },
      {
        role: 'user',
        text: 'Before after',
        media: [
          { kind: 'image', data: png, mime: 'image/*', offset: 7 },
          { kind: 'image', data: Buffer.alloc(0), mime: 'image/*', offset: 12, url: 'https://example.com/cat.png' },
          { kind: 'audio', data: wav, mime: 'audio/wav', offset: 0 },
        ],
      },
    ];
    expect(chatMessages(history)).toEqual([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'input_audio', input_audio: { data: wav.toString('base64'), format: 'wav' } },
          { type: 'text', text: 'Before ' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } },
          { type: 'text', text: 'after' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
        ],
      },
    ]);
  });

  it('keeps the type the request declared, and a user message without media as text', () => {
    const [message] = chatMessages([{ role: 'user', text: '', media: [{ kind: 'image', data: png, mime: 'image/webp', offset: 0 }] }]);
    expect(message).toEqual({ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/webp;base64,${png.toString('base64')}` } }] });
    expect(chatMessages([{ role: 'user', text: 'hi' }])).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('gives a tool result’s images as parts of the tool message, and a result without them as text', () => {
    const history: HistoryItem[] = [
      { role: 'assistant', text: '', toolCalls: [{ id: 'call_1', name: 'snap', arguments: '{}' }] },
      { role: 'tool', callId: 'call_1', output: 'The screen:', media: [{ kind: 'image', data: png, mime: 'image/png', offset: 11 }] },
      { role: 'tool', callId: 'call_2', output: 'none' },
    ];
    const [, withImage, plain] = chatMessages(history);
    expect(withImage).toEqual({
      role: 'tool',
      tool_call_id: 'call_1',
      content: [
        { type: 'text', text: 'The screen:' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } },
      ],
    });
    expect(plain).toEqual({ role: 'tool', tool_call_id: 'call_2', content: 'none' });
  });
});
