import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderClient, type ResolveSecret } from '../../../companion/src/providers/client.js';
import { readChatAnswer } from '../../../companion/src/providers/chat-stream.js';
import { redact, rememberSecret } from '../../../companion/src/redaction.js';
import { closeServer } from '../../helpers/http-server.js';

/*
 * A provider's echo of Hearth's key for it never reaches the client (issue 31, item 9): an error
 * answer is passed on as its status and its redacted `error.message` only (with an OpenAI-shaped
 * `type` and `code` when the provider gave plain ones), and redaction removes a key however it
 * was written: URL-encoded, base64 at any offset, hex, upper-case, JSON-escaped.
 */

const KEY = 'sk-live/Ab"cd+ef\\0123456789xyz';
const resolveSecret: ResolveSecret = (reference) => (reference === 'secret:ECHO_KEY' ? KEY : undefined);

/** Every way the key is written in the provider's echo below. */
function encodings(value: string): string[] {
  const bytes = Buffer.from(value);
  return [
    value,
    encodeURIComponent(value),
    bytes.toString('base64'),
    Buffer.from(`Bearer ${value}`).toString('base64'),
    Buffer.from(`x${value}`).toString('base64url'),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
    value.toUpperCase(),
    JSON.stringify(value).slice(1, -1),
  ];
}

/** Parts of the key long enough to give it away (its base64 and hex forms included). */
function giveaways(value: string): string[] {
  return [value.slice(8), Buffer.from(value).toString('base64').slice(4, 20), Buffer.from(value).toString('hex').slice(8, 30)];
}

describe('redaction of a secret in every common encoding', () => {
  it('removes each form, in any case', () => {
    for (const form of encodings(KEY)) {
      const text = redact(`the server said: ${form} (end)`, [KEY]);
      expect(text, form).toContain('[redacted]');
      for (const part of giveaways(KEY)) expect(text.toLowerCase(), form).not.toContain(part.toLowerCase());
    }
  });
});

describe('an error answer relayed to the client', () => {
  let url = '';
  const server = createServer((request, response) => {
    request.resume();
    const echo = encodings(KEY).join(' | ');
    response.writeHead(400, { 'content-type': 'application/json', 'x-echo': encodeURIComponent(KEY) });
    response.end(
      JSON.stringify({
        error: { message: `Bad request; you sent: ${echo}`, type: 'invalid_request_error', code: 'context_length_exceeded', param: KEY },
        debug: { headers: { authorization: `Bearer ${KEY}` }, raw: Buffer.from(KEY).toString('base64') },
      }),
    );
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => closeServer(server));

  it('is its status and its redacted error.message, nothing else of the body or headers', async () => {
    const client = new ProviderClient([{ name: 'echo', base_url: url, api_key: 'secret:ECHO_KEY' }], resolveSecret);
    const response = await client.forward('/chat/completions', 'echo/m', { messages: [] }, new AbortController().signal);
    expect(response.status).toBe(400);
    expect(response.headers.get('x-echo')).toBeNull();
    const text = await response.text();
    const body = JSON.parse(text) as { error: Record<string, unknown> };
    expect(Object.keys(body)).toEqual(['error']);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'context_length_exceeded', param: null });
    expect(body.error.message).toMatch(/^Bad request; you sent: \[redacted\]/);
    for (const part of giveaways(KEY)) expect(text.toLowerCase()).not.toContain(part.toLowerCase());
  });
});

describe("an error event in a provider's chat stream (an agent's turn)", () => {
  it('becomes provider_error with the key redacted, however it was encoded', async () => {
    rememberSecret(KEY); // as the secret store does when it resolves the provider's key
    const echo = encodings(KEY).join(' | ');
    const stream = new Response(`data: ${JSON.stringify({ error: { message: `you sent ${echo}` } })}\n\n`, {
      headers: { 'content-type': 'text/event-stream' },
    });
    const error = (await readChatAnswer(stream, () => undefined, 'echo').catch((caught: unknown) => caught)) as Error;
    expect(error).toMatchObject({ code: 'provider_error' });
    expect(error.message).toContain('[redacted]');
    for (const part of giveaways(KEY)) expect(error.message.toLowerCase()).not.toContain(part.toLowerCase());
  });
});
