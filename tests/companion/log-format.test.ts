import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, formatRecord } from '../../companion/src/log-format.js';

/** A stream that collects what is written, optionally posing as a terminal. */
function sink(isTTY: boolean): { stream: PassThrough & { isTTY?: boolean }; text(): string } {
  const stream = Object.assign(new PassThrough(), { isTTY });
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('formatRecord', () => {
  it('writes time, level, message and the other fields, leaving out what a person does not need', () => {
    const time = new Date(2026, 10, 23, 9, 5, 7).getTime();
    const line = formatRecord({ level: 30, time, pid: 1, hostname: 'h', reqId: 'req-1', msg: 'model loaded', model: 'tiny', threads: 1, sizes: [1, 2] });
    expect(line).toBe('09:05:07 INFO  model loaded model=tiny threads=1 sizes=[1,2]\n');
  });

  it('puts an error stack under the line, indented', () => {
    const line = formatRecord({ level: 50, time: 0, msg: 'stream failed', err: { message: 'boom', stack: 'Error: boom\n    at here' } });
    expect(line.split('\n')).toEqual([expect.stringMatching(/^\d\d:\d\d:\d\d ERROR stream failed$/), '    Error: boom', '        at here', '']);
  });
});

describe('createLogger', () => {
  it('writes readable lines on a terminal', async () => {
    const out = sink(true);
    createLogger({}, out.stream).warn({ path: '/x' }, 'No models found');
    await flush();
    expect(out.text()).toMatch(/^\d\d:\d\d:\d\d WARN {2}No models found path=\/x\n$/);
  });

  it('writes one JSON object per line when the stream is not a terminal, or when JSON is asked for', async () => {
    for (const [isTTY, format] of [
      [false, undefined],
      [true, 'json'],
    ] as const) {
      const out = sink(isTTY);
      createLogger({ format }, out.stream).info({ model: 'tiny' }, 'model loaded');
      await flush();
      expect(JSON.parse(out.text())).toMatchObject({ level: 30, msg: 'model loaded', model: 'tiny' });
    }
  });

  it('text can be asked for when the stream is not a terminal; the level decides what is written', async () => {
    const out = sink(false);
    const log = createLogger({ format: 'text', level: 'warn' }, out.stream);
    log.info('hidden');
    log.debug('hidden too');
    log.warn('shown');
    await flush();
    expect(out.text()).toMatch(/^\d\d:\d\d:\d\d WARN {2}shown\n$/);
  });
});
