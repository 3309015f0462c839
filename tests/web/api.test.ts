import { afterEach, describe, expect, it, vi } from 'vitest';
import { streamChat } from '$lib/api/chat';
import { downloadModelFile, modelFilePath, modelFileSize } from '$lib/api/models';
import { loadModel, serverStatus, unloadModel } from '$lib/api/server';
import { respond as stub } from './fetch-stub.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('model files', () => {
  it('escapes the id in the file path', () => {
    expect(modelFilePath('qwen2.5:0.5b')).toBe('/v1/models/qwen2.5%3A0.5b/file');
  });

  it('asks the size with HEAD', async () => {
    const fetch = stub(() => new Response(null, { status: 200, headers: { 'content-length': '644096' } }));
    expect(await modelFileSize('tiny')).toBe(644096);
    expect(fetch.mock.calls[0]![0]).toBe('/v1/models/tiny/file');
    expect(fetch.mock.calls[0]![1]!.method).toBe('HEAD');
  });

  it('refuses a size it was not told', async () => {
    stub(() => new Response(null, { status: 200 }));
    await expect(modelFileSize('tiny')).rejects.toMatchObject({ code: 'invalid_response' });
  });

  it('reports the error of an unknown model', async () => {
    stub(() => Response.json({ error: { message: 'no', type: 'invalid_request_error', code: 'model_not_found', param: 'id' } }, { status: 404 }));
    await expect(downloadModelFile('nope')).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
  });

  it('opens the download with its size and body', async () => {
    stub(() => new Response(new Uint8Array([71, 71, 85, 70]), { headers: { 'content-length': '4' } }));
    const download = await downloadModelFile('tiny');
    expect(download.size).toBe(4);
    expect(new Uint8Array(await new Response(download.body).arrayBuffer())).toEqual(new Uint8Array([71, 71, 85, 70]));
  });
});

describe('admin', () => {
  it('reads the status and posts load and unload', async () => {
    const fetch = stub((path) => Response.json(path === '/admin/status' ? { version: '1', loaded: [] } : { id: 'tiny' }));
    expect(await serverStatus()).toEqual({ version: '1', loaded: [] });
    await loadModel('tiny');
    await unloadModel('a b');
    expect(fetch.mock.calls.map(([path, init]) => `${init?.method ?? 'GET'} ${path}`)).toEqual([
      'GET /admin/status',
      'POST /admin/models/tiny/load',
      'POST /admin/models/a%20b/unload',
    ]);
  });
});

describe('streamChat', () => {
  it('sends only the sampling settings that are set', async () => {
    const fetch = stub(() => new Response('data: [DONE]\n\n'));
    await streamChat({ model: 'tiny', messages: [], max_tokens: 64, temperature: undefined, top_p: 0.5 });
    expect(JSON.parse(String(fetch.mock.calls[0]![1]!.body))).toEqual({
      model: 'tiny',
      messages: [],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 64,
      top_p: 0.5,
    });
  });

  it('turns a connection lost while reading into stream_interrupted', async () => {
    const encoder = new TextEncoder();
    let sent = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (!sent) {
          sent = true;
          controller.enqueue(
            encoder.encode(
              'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"tiny","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n',
            ),
          );
        } else controller.error(new TypeError('network error'));
      },
    });
    stub(() => new Response(body));
    const deltas: string[] = [];
    await expect(streamChat({ model: 'tiny', messages: [], onDelta: (text) => deltas.push(text) })).rejects.toMatchObject({
      name: 'ApiError',
      code: 'stream_interrupted',
    });
    expect(deltas).toEqual(['hi']);
  });
});
