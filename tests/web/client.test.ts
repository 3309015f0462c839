import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '$lib/api/client';
import { streamChat } from '$lib/api/chat';
import { listModels } from '$lib/api/models';
import { health } from '$lib/api/server';

const encoder = new TextEncoder();

function chunk(content: string | null, finish: string | null = null, usage: object | null = null): string {
  const choices = content === null && finish === null ? [] : [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }];
  return `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'tiny', choices, usage })}\n\n`;
}

const usage = { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 };
const transcript = [chunk(''), chunk('Héllo'), chunk(', wörld 🔥'), chunk(null, 'stop'), chunk(null, null, usage), 'data: [DONE]\n\n'].join('');

/** A body that yields `bytes` in pieces of `size` bytes. */
function pieces(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    },
  });
}

function respond(body: BodyInit | null, init: ResponseInit = {}) {
  const fetch = vi.fn(async (_input: RequestInfo | URL, _init?: RequestInit) => new Response(body, init));
  vi.stubGlobal('fetch', fetch);
  return fetch;
}

const messages = [{ role: 'user' as const, content: 'hi' }];

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('streamChat', () => {
  it.each([1, 2, 3, 7, 64, 4096])('parses the stream delivered in %i-byte pieces', async (size) => {
    const fetch = respond(pieces(encoder.encode(transcript), size), { headers: { 'content-type': 'text/event-stream' } });
    const deltas: string[] = [];

    const result = await streamChat({ model: 'tiny', messages, onDelta: (text) => deltas.push(text) });

    expect(result).toEqual({ text: 'Héllo, wörld 🔥', reasoning: '', usage, finishReason: 'stop' });
    expect(deltas).toEqual(['Héllo', ', wörld 🔥']);
    const [path, init] = fetch.mock.calls[0];
    expect(path).toBe('/v1/chat/completions');
    expect(init?.method).toBe('POST');
    expect(JSON.parse(String(init?.body))).toEqual({
      model: 'tiny',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('accepts CRLF line endings, comments and data fields without a space', async () => {
    const body = ': keep-alive\r\n\r\n' + chunk('a').replace('data: ', 'data:').replaceAll('\n', '\r\n') + 'data: [DONE]\r\n\r\n';
    respond(body);

    expect((await streamChat({ model: 'tiny', messages })).text).toBe('a');
  });

  it('throws the error event a stream carries; a server error (e.g. the companion shutting down) counts as a 503', async () => {
    respond(chunk('partial') + 'data: {"error":{"message":"Model crashed","type":"server_error","code":"internal_error","param":null}}\n\n');
    await expect(streamChat({ model: 'tiny', messages })).rejects.toMatchObject({
      status: 503,
      code: 'internal_error',
      message: 'Model crashed',
    });

    respond(chunk('partial') + 'data: {"error":{"message":"Too long","type":"invalid_request_error","code":"context_length_exceeded","param":null}}\n\n');
    await expect(streamChat({ model: 'tiny', messages })).rejects.toMatchObject({ status: 200, code: 'context_length_exceeded' });
  });

  it('reports a stream that ends before [DONE]', async () => {
    respond(chunk('partial'));

    await expect(streamChat({ model: 'tiny', messages })).rejects.toMatchObject({ code: 'stream_interrupted' });
  });

  it('cancels the stream when the signal is aborted', async () => {
    const cancel = vi.fn();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(chunk('first')));
      },
      cancel,
    });
    respond(body);
    const controller = new AbortController();

    const reply = streamChat({ model: 'tiny', messages, signal: controller.signal, onDelta: () => controller.abort() });

    await expect(reply).rejects.toMatchObject({ name: 'AbortError' });
    expect(cancel).toHaveBeenCalled();
  });

  it('passes the signal to fetch and rethrows its abort reason', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(
        (_input: RequestInfo | URL, init?: RequestInit) =>
          new Promise<Response>((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal?.reason))),
      ),
    );
    const controller = new AbortController();

    const reply = streamChat({ model: 'tiny', messages, signal: controller.signal });
    controller.abort();

    const error = await reply.catch((error: unknown) => error);
    expect(error).not.toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ name: 'AbortError' });
  });
});

describe('request errors', () => {
  it('parses the OpenAI error shape', async () => {
    const error = { message: 'No model named nope', type: 'not_found_error', code: 'model_not_found', param: 'model' };
    respond(JSON.stringify({ error }), { status: 404, headers: { 'content-type': 'application/json' } });

    const thrown = await streamChat({ model: 'nope', messages }).catch((error: unknown) => error);

    expect(thrown).toBeInstanceOf(ApiError);
    expect(thrown).toMatchObject({ status: 404, code: 'model_not_found', message: 'No model named nope', param: 'model' });
  });

  it("shows the companion's message without Markdown backticks", async () => {
    const error = { message: 'Create one with `hearth keys create`.', type: 'authentication_error', code: 'invalid_api_key', param: null };
    respond(JSON.stringify({ error }), { status: 401, headers: { 'content-type': 'application/json' } });
    await expect(listModels()).rejects.toMatchObject({ status: 401, message: 'Create one with hearth keys create.' });
  });

  it('describes an error body that is not the OpenAI shape by its status', async () => {
    respond('<h1>Bad gateway</h1>', { status: 502, statusText: 'Bad Gateway' });

    await expect(listModels()).rejects.toMatchObject({ status: 502, code: 'invalid_response', message: 'HTTP 502 Bad Gateway' });
  });

  it('reports an unreachable companion', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => Promise.reject(new TypeError('fetch failed'))),
    );

    await expect(health()).rejects.toMatchObject({ status: 0, code: 'unreachable' });
  });
});

describe('listModels and health', () => {
  it('returns the model records with their extra fields', async () => {
    const model = {
      id: 'tiny',
      object: 'model',
      created: 1,
      owned_by: 'hearth',
      loaded: false,
      size_bytes: 524288,
      context_length: 2048,
      capabilities: ['chat'],
    };
    const fetch = respond(JSON.stringify({ object: 'list', data: [model] }));

    expect(await listModels()).toEqual([model]);
    expect(fetch.mock.calls[0][0]).toBe('/v1/models');
  });

  it('returns the status and version', async () => {
    respond(JSON.stringify({ status: 'ok', version: '0.1.0' }));

    expect(await health()).toEqual({ status: 'ok', version: '0.1.0' });
  });
});
