/**
 * Media in tool results as the generation contract carries them: each image goes where its result
 * renders (the call's place in the assistant turn, whatever order the results came in), with the
 * marker at its place in the result's text; an MCP result's image stands as a note in the text,
 * the image placed right after it; a conversation keeps a result's image bytes when stored.
 */
import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { RunStore } from '../../../companion/src/agents/store.js';
import { historyFor, toolResultItem } from '../../../companion/src/agents/tool-images.js';
import { toChatHistory } from '../../../companion/src/inference/chat-history.js';
import { requestMedia } from '../../../companion/src/inference/media.js';
import type { HistoryItem, MediaPart } from '../../../companion/src/inference/types.js';
import { openDatabase } from '../../../companion/src/store/database.js';
import { resultContent } from '../../../companion/src/tools/result.js';
import { tempFolder } from '../../helpers/temp.js';

const image = (name: string, offset: number): MediaPart => ({ kind: 'image', data: Buffer.from(name), mime: 'image/png', offset });
const names = (media: MediaPart[]) => media.map((part) => part.data.toString());

const history: HistoryItem[] = [
  { role: 'user', text: 'look', media: [image('question', 4)] },
  {
    role: 'assistant',
    text: '',
    toolCalls: [
      { id: 'a', name: 'snap', arguments: '{}' },
      { id: 'b', name: 'snap', arguments: '{}' },
    ],
  },
  // The results come in the other order: they still render at their calls' places.
  { role: 'tool', callId: 'b', output: 'second: ', media: [image('b', 8)] },
  { role: 'tool', callId: 'a', output: 'first: ', media: [image('a1', 7), image('a2', 0)] },
  { role: 'user', text: 'and this', media: [image('after', 0)] },
];

describe('media in tool results', () => {
  it('are in prompt order: by their calls, then the next user message', () => {
    expect(names(requestMedia({ history }))).toEqual(['question', 'a2', 'a1', 'b', 'after']);
  });

  it('render as the marker at each image’s place in the result (only with a marker)', () => {
    const items = toChatHistory(history, 'messages', { mediaMarker: '<M>' });
    const calls = (items[1] as unknown as { response: { result?: unknown }[] }).response;
    expect(calls.map((call) => call.result)).toEqual(['<M>first: <M>', 'second: <M>']);
    const plain = (toChatHistory(history, 'messages')[1] as unknown as { response: { result?: unknown }[] }).response;
    expect(plain.map((call) => call.result)).toEqual(['first: ', 'second: ']);
  });

  it('an MCP result’s image is a note in its text, the image placed after it; a note that was cut off takes its image with it', () => {
    const data = Buffer.from('not really a png').toString('base64');
    const result = {
      content: [
        { type: 'text', text: 'Here:' },
        { type: 'image', data, mimeType: 'image/png' },
        { type: 'text', text: 'Done.' },
      ],
    };
    const { text, images } = resultContent(result, 1024);
    expect(text).toBe('Here:\n[image: image/png, 16 bytes]\nDone.');
    expect(images).toHaveLength(1);
    expect(text.slice(0, images[0]!.offset)).toBe('Here:\n[image: image/png, 16 bytes]');
    expect(images[0]).toMatchObject({ mime: 'image/png', block: 1 });
    const failed = resultContent({ ...result, isError: true }, 1024);
    expect(failed.text.slice(0, failed.images[0]!.offset)).toBe('Error: Here:\n[image: image/png, 16 bytes]');
    const cut = resultContent(result, 8);
    expect(cut.text).toMatch(/^Here:\n\[i\n\[output cut/);
    expect(cut.images).toEqual([]);
  });

  it('a stored conversation keeps a result’s image bytes; a model without vision gets the notes only', () => {
    const db = openDatabase(join(tempFolder('tool-media'), 'hearth.db'));
    const store = new RunStore(db);
    store.appendMessages('keeper', 'conv_1', null, history);
    const back = store.history('keeper', 'conv_1');
    db.close();
    expect(names(requestMedia({ history: back }))).toEqual(['question', 'a2', 'a1', 'b', 'after']);
    expect(Buffer.isBuffer((back[2] as { media: MediaPart[] }).media[0]!.data)).toBe(true);
    expect(requestMedia({ history: historyFor({ vision: false, local: true }, back) })).toEqual([]);
    // A provider's model keeps the user's images (the caller sent them) and gets tool results as notes.
    expect(names(requestMedia({ history: historyFor({ vision: false, local: false }, back) }))).toEqual(['question', 'after']);
  });

  it('an agent’s vision model gets a result’s image checked; one that fails the check is left out, and a line says why', async () => {
    const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: { r: 1, g: 2, b: 3 } } })
      .png()
      .toBuffer();
    const result = {
      content: [
        { type: 'image', data: png.toString('base64'), mimeType: 'image/png' },
        { type: 'image', data: Buffer.from('not really a png').toString('base64'), mimeType: 'image/png' },
      ],
    };
    const seen = await toolResultItem({ id: 'c1', name: 'snap' }, result, 1024, { vision: true });
    expect(seen).toMatchObject({ role: 'tool', callId: 'c1' });
    const item = seen as Extract<HistoryItem, { role: 'tool' }>;
    expect(item.media?.map((part) => part.offset)).toEqual([`[image: image/png, ${png.length} bytes]`.length]);
    expect(item.output).toMatch(/\n\[the result of snap, content\[1\] is not an image local models here can read .* It is left out\.\]$/);
    const blind = await toolResultItem({ id: 'c1', name: 'snap' }, result, 1024, { vision: false });
    expect(blind).toEqual({ role: 'tool', callId: 'c1', output: `[image: image/png, ${png.length} bytes]\n[image: image/png, 16 bytes]` });
  });
});
