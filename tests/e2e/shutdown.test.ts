import { afterAll, describe, expect, it } from 'vitest';
import { startServerWithSlowModel } from '../browser/slow-model.js';
import type { RunningServer } from '../helpers/server.js';
import { openStream } from '../helpers/streams.js';

/*
 * Ctrl+C (SIGINT) while replies stream: every stream ends properly and says why before the
 * models are released, and nothing is logged about disposed objects.
 */

let server: RunningServer | undefined;

afterAll(async () => {
  await server?.stop('SIGKILL');
});

describe('hearth serve stopped with SIGINT during streaming replies', () => {
  it('ends every stream with a shutdown error, then releases the models and exits 0 with no DisposedError', async () => {
    server = await startServerWithSlowModel();
    const messages = [{ role: 'user', content: 'Tell me everything.' }];
    const chat = await openStream(
      `${server.url}/v1/chat/completions`,
      { model: 'slow', stream: true, max_tokens: 1_000_000, messages },
      (text) => text.split('"content":"').length > 4,
    );
    const responses = await openStream(
      `${server.url}/v1/responses`,
      { model: 'slow', stream: true, max_output_tokens: 1_000_000, input: 'Tell me everything.' },
      (text) => text.split('response.output_text.delta').length > 4,
    );

    server.process.kill('SIGINT');
    const [chatText, responsesText] = await Promise.all([chat.rest(), responses.rest()]);
    expect(await server.stop()).toBe(0);

    const chatEvents = chatText.trim().split('\n\n');
    expect(JSON.parse(chatEvents.at(-1)!.replace(/^data: /, ''))).toEqual({
      error: expect.objectContaining({ code: 'server_busy', message: expect.stringMatching(/shutting down/) }),
    });
    expect(chatText).not.toContain('[DONE]');
    const last = responsesText.trim().split('\n\n').at(-1)!;
    expect(last).toMatch(/^event: error\n/);
    expect(JSON.parse(last.split('\ndata: ')[1]!)).toMatchObject({ type: 'error', code: 'server_busy' });

    expect(server.stderr()).not.toMatch(/DisposedError|Object is disposed|stream failed/);
  });
});
