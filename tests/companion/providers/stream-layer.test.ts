import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HearthError } from '../../../companion/src/errors.js';
import { textCapture } from '../../../companion/src/providers/capture.js';
import { relayResponse, type LineHook, type RelayOutcome } from '../../../companion/src/providers/relay.js';
import { modelRewrite, rewriteModelStream } from '../../../companion/src/providers/stream.js';
import { EventLines, fieldOf } from '../../../companion/src/sse-reader.js';
import { REPO_ROOT } from '../../helpers/hearth-process.js';

/*
 * One stream layer for a provider's streamed answer (issue 33, item 3): its lines were cut and
 * decoded three times on the way to a client (the relay's tap, the model rewrite, the attribution
 * capture), each with its own scanner. Now the relay cuts them once (sse-reader.ts `EventLines`)
 * and its hooks read every line; what the client receives is what the three passes sent.
 */

const encoder = new TextEncoder();

const sse = [
  ': keep-alive comment\n\n',
  'data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"a \\"model\\": b ✓"}}]}\n\n',
  'data:{"id":"c1","model":"gpt-4o","choices":[{"delta":{"content":" Grüße"}}]}\r\n\r\n',
  'event: response.created\ndata: {"type":"response.created","response":{"model":"gpt-4o","tools":[{"parameters":{"properties":{"model":{"type":"string"}}}}]}}\n\n',
  'data: not json with "model"\n\n',
  'data: {"model": 42}\n\n',
  'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}\n\n',
  'data: [DONE]',
].join('');
/** What the rewrite and the capture made of `sse` when each scanned it on its own. */
const expected = [
  ': keep-alive comment\n\n',
  'data: {"id":"c1","object":"chat.completion.chunk","model":"p/gpt-4o","choices":[{"index":0,"delta":{"content":"a \\"model\\": b ✓"}}]}\n\n',
  'data:{"id":"c1","model":"p/gpt-4o","choices":[{"delta":{"content":" Grüße"}}]}\r\n\r\n',
  'event: response.created\ndata: {"type":"response.created","response":{"model":"p/gpt-4o","tools":[{"parameters":{"properties":{"model":{"type":"string"}}}}]}}\n\n',
  'data: not json with "model"\n\n',
  'data: {"model": 42}\n\n',
  'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}\n\n',
  'data: [DONE]',
].join('');

function pieces(bytes: Uint8Array, size: number, end: 'close' | 'break' = 'close'): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at < bytes.length) {
        controller.enqueue(bytes.slice(at, at + size));
        at += size;
      } else if (end === 'break') controller.error(new TypeError('terminated'));
      else controller.close();
    },
  });
}

function relay(body: ReadableStream<Uint8Array>, hooks: LineHook[], lineLimit?: number) {
  const seen: { outcome?: RelayOutcome; tokens?: [number?, number?] } = {};
  const response = relayResponse(new Response(body, { headers: { 'content-type': 'text/event-stream' } }), {
    responses: false,
    interrupted: (reason) => new HearthError('provider_interrupted', String(reason)),
    clientGone: () => false,
    onSettle: (outcome, tap) => Object.assign(seen, { outcome, tokens: [tap.promptTokens, tap.completionTokens] }),
    hooks,
    lineLimit,
  });
  return { response, seen };
}

describe('the relay with the model rewrite and the text capture on its lines', () => {
  it.each([1, 2, 3, 7, 64, 100_000])('sends what the separate passes sent, and captures the text, whatever the chunk size (%i bytes)', async (size) => {
    const captured: string[] = [];
    const { response, seen } = relay(pieces(encoder.encode(sse), size), [modelRewrite('p/gpt-4o'), textCapture((text) => captured.push(text))]);
    expect(await response.text()).toBe(expected);
    expect(captured).toEqual(['a "model": b ✓ Grüße']);
    expect(seen).toEqual({ outcome: 'completed', tokens: [3, 2] });
  });

  it('hands each complete line to every hook once, in order, after the tap', async () => {
    const lines: string[][] = [[], []];
    const hooks = lines.map((into) => ({ line: (line: string) => (into.push(line), line) }));
    const { response } = relay(pieces(encoder.encode(sse), 3), hooks);
    await response.text();
    const all = sse.split('\n');
    expect(lines[0]).toEqual(all);
    expect(lines[1]).toEqual(all);
  });

  it('without a rewriting hook passes the bytes as they came', async () => {
    const bytes = new Uint8Array([...encoder.encode('data: {"model":"m"}\n\n'), 0xef, 0xbb, 0xbf, 0xff, ...encoder.encode('\n\n')]);
    const { response } = relay(pieces(bytes, 5), [textCapture(() => undefined)]);
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(bytes);
  });

  it('a stream that breaks ends with its error event, and the capture still gets the text that came', async () => {
    const captured: string[] = [];
    const { response, seen } = relay(pieces(encoder.encode('data: {"model":"m","choices":[{"delta":{"content":"half"}}]}\n\ndata: {"cho'), 8, 'break'), [
      modelRewrite('p/m'),
      textCapture((text) => captured.push(text)),
    ]);
    const text = await response.text();
    expect(text.startsWith('data: {"model":"p/m","choices":[{"delta":{"content":"half"}}]}\n\ndata: {"error":')).toBe(true);
    expect(seen.outcome).toBe('broken');
    expect(captured).toEqual(['half']);
  });

  it('a line past the limit ends the stream with provider_interrupted', async () => {
    const captured: string[] = [];
    const { response, seen } = relay(pieces(encoder.encode(`data: ${'x'.repeat(4096)}`), 256), [textCapture((text) => captured.push(text))], 1024);
    const text = await response.text();
    expect(text).toMatch(/^data: \{"error":\{"message":"LineTooLong: it sent a line longer than 1 KB without ending it".*"code":"provider_interrupted"/);
    expect(seen.outcome).toBe('broken');
    expect(captured).toEqual(['']);
  });

  it('a client that cancels hears no end: nothing is captured from half an answer', async () => {
    const captured: string[] = [];
    const { response, seen } = relay(pieces(encoder.encode(sse), 16), [textCapture((text) => captured.push(text))]);
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    expect(seen.outcome).toBe('cancelled');
    expect(captured).toEqual([]);
  });
});

describe('EventLines', () => {
  it('searches each byte once however a long line is split, and decodes characters split between chunks', () => {
    const lines = new EventLines(8 * 1024 * 1024);
    const piece = encoder.encode('é'.repeat(512));
    for (let index = 0; index < 2048; index++) {
      // The last character of each piece comes in two chunks.
      expect(lines.push(piece.subarray(0, 1023))).toBeUndefined();
      expect(lines.push(piece.subarray(1023))).toBeUndefined();
    }
    const whole = lines.push(encoder.encode('\nrest'));
    expect(lines.scanned).toBe(2048 * 1024 + 5);
    expect(whole!.lines).toEqual(['é'.repeat(512 * 2048)]);
    expect(lines.end()).toEqual({ bytes: encoder.encode('rest'), lines: ['rest'] });
    expect(lines.end()).toBeUndefined();
  });

  it('fieldOf reads a field and its value as the event-stream format says', () => {
    expect(fieldOf('data: x')).toEqual({ field: 'data', value: 'x' });
    expect(fieldOf('data:  x\r')).toEqual({ field: 'data', value: ' x' });
    expect(fieldOf('data')).toEqual({ field: 'data', value: '' });
    expect(fieldOf(': comment')).toEqual({ field: '', value: 'comment' });
    expect(fieldOf('event:message.delta')).toEqual({ field: 'event', value: 'message.delta' });
  });

  it('rewriteModelStream on its own ends with an error for a line past the limit instead of holding it', async () => {
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(encoder.encode('x'.repeat(1024 * 1024)));
      },
    });
    await expect(new Response(rewriteModelStream(endless, 'p/m')).text()).rejects.toMatchObject({ name: 'LineTooLong' });
  });
});

describe('the provider stream layer', () => {
  it('cuts lines in sse-reader.ts only: no file of providers/ or routes/openai/ scans for line ends itself', () => {
    const source = join(REPO_ROOT, 'companion', 'src');
    const files = ['providers', join('routes', 'openai')].flatMap((folder) =>
      readdirSync(join(source, folder))
        .filter((name) => name.endsWith('.ts'))
        .map((name) => join(folder, name)),
    );
    const scanning = files.filter((file) =>
      /new LineBuffer\(|lastIndexOf\('\\n'\)|\.split\('\\n'\)|new TextDecoder\(\)\.decode\(.*\{ stream/.test(readFileSync(join(source, file), 'utf8')),
    );
    expect(scanning).toEqual([]);
  });
});
